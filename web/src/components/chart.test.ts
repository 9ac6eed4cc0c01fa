import { describe, expect, it } from 'vitest';
import { cssColor, isolated, withAlpha } from './Chart';

describe('chart colours', () => {
  it('turns a hex or rgb colour into a translucent one for area fills', () => {
    expect(withAlpha('#1d4ed8', 0.15)).toBe('rgba(29, 78, 216, 0.15)');
    expect(withAlpha('#fff', 0.5)).toBe('rgba(255, 255, 255, 0.5)');
    expect(withAlpha('rgb(96, 165, 250)', 0.15)).toBe('rgba(96, 165, 250, 0.15)');
    expect(withAlpha('teal', 0.15)).toBe('teal');
  });
  it('passes a colour that is not a custom property through', () => {
    expect(cssColor('#059669')).toBe('#059669');
  });
});

describe('isolated values', () => {
  it('finds the values a line cannot draw: no neighbour on either side', () => {
    expect(isolated([null, 3, null, null, 1, 2, null, 5])).toEqual([1, 7]);
    expect(isolated([4])).toEqual([0]);
    expect(isolated([1, 2, 3])).toEqual([]);
    expect(isolated([])).toEqual([]);
  });
});
