import { describe, expect, it } from 'vitest';
import { isChatModel, sampling } from './Playground';

const m = (model: string, kind?: string) => ({ gatewayId: 'gw', gatewaySlug: 'prod', tenantId: 'acme', provider: 'openai', model, route: '', kind });

describe('the Playground', () => {
  it('offers every model but embedding models', () => {
    expect([m('gpt-4o-mini', 'chat'), m('text-embedding-3-small', 'embedding'), m('gpt-3.5-turbo-instruct', 'completion'), m('old')].filter(isChatModel).map((x) => x.model)).toEqual([
      'gpt-4o-mini',
      'gpt-3.5-turbo-instruct',
      'old',
    ]);
  });
  it('sends only the sampling options that are set', () => {
    expect(sampling('', '')).toEqual({});
    expect(sampling('0', '256')).toEqual({ temperature: 0, maxTokens: 256 });
    expect(sampling('0.7', 'lots')).toEqual({ temperature: 0.7 });
  });
});
