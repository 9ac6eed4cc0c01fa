import { describe, expect, it } from 'vitest';
import { modelOptions } from './models';

describe('modelOptions', () => {
  const catalog = [
    { provider: 'openai', id: 'gpt-4o', name: 'GPT-4o', kind: 'chat' },
    { provider: 'openai', id: 'text-embedding-3-small', name: 'Embedding', kind: 'embedding' },
    { provider: 'anthropic', id: 'claude-sonnet-4-5', name: 'Claude', kind: 'chat' },
  ];
  const keys = [
    { provider: 'openai', models: ['gpt-4o-mini', 'gpt-4o'] },
    { provider: 'openai', models: ['retired-model'], disabled: true },
  ];
  it('offers the enabled keys’ models first, then the catalog’s chat models of the provider, once each', () => {
    expect(modelOptions('openai', keys, catalog)).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(modelOptions('anthropic', keys, catalog)).toEqual(['claude-sonnet-4-5']);
  });
  it('offers embedding models when asked (a key’s model list)', () => {
    expect(modelOptions('openai', [], catalog, ['chat', 'embedding'])).toEqual(['gpt-4o', 'text-embedding-3-small']);
  });
});
