import { describe, expect, it } from 'vitest';
import { tabAfter } from './Tabs';

describe('tabAfter', () => {
  const ids = ['activity', 'settings', 'routes', 'keys'];
  it('moves right and left, wrapping at both ends', () => {
    expect(tabAfter(ids, 'settings', 'ArrowRight')).toBe('routes');
    expect(tabAfter(ids, 'keys', 'ArrowRight')).toBe('activity');
    expect(tabAfter(ids, 'settings', 'ArrowLeft')).toBe('activity');
    expect(tabAfter(ids, 'activity', 'ArrowLeft')).toBe('keys');
  });
  it('goes to the first and last tab on Home and End', () => {
    expect(tabAfter(ids, 'routes', 'Home')).toBe('activity');
    expect(tabAfter(ids, 'routes', 'End')).toBe('keys');
  });
  it('leaves other keys to the page', () => {
    expect(tabAfter(ids, 'routes', 'Enter')).toBeNull();
    expect(tabAfter(ids, 'routes', 'ArrowDown')).toBeNull();
  });
});
