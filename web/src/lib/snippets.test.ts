import { describe, expect, it } from 'vitest';
import { gatewayBaseURL, snippetModel, tokenSnippets } from './snippets';

describe('gatewayBaseURL', () => {
  it('takes the public URL the server knows', () => {
    expect(gatewayBaseURL({ tenantId: 'acme', slug: 'prod', baseUrl: 'https://ai.example.com/v1/acme/prod' }, 'http://localhost:8080')).toBe('https://ai.example.com/v1/acme/prod');
  });
  it('puts the dashboard origin in front of a path', () => {
    expect(gatewayBaseURL({ tenantId: 'acme', slug: 'prod', baseUrl: '/v1/acme/prod' }, 'http://127.0.0.1:9/')).toBe('http://127.0.0.1:9/v1/acme/prod');
    expect(gatewayBaseURL({ tenantId: 'acme', slug: 'prod' }, 'http://127.0.0.1:9')).toBe('http://127.0.0.1:9/v1/acme/prod');
  });
});

describe('tokenSnippets', () => {
  const base = 'https://ai.example.com/v1/acme/prod';
  const token = 'sk-sl-TESTTOKEN';
  const s = Object.fromEntries(tokenSnippets(base, token, 'smart', 'claude-sonnet-4-5').map((x) => [x.id, x.code]));

  it('writes every client with the full URL of the /compat door and the token', () => {
    expect(Object.keys(s)).toEqual(['curl', 'openai-js', 'openai-python', 'anthropic-js', 'anthropic-python', 'claude-code']);
    for (const code of Object.values(s)) {
      expect(code).toContain(`${base}/compat`);
      expect(code).toContain(token);
    }
  });
  it('sends curl to the chat completions path with a bearer token and valid JSON', () => {
    expect(s.curl).toContain(`curl ${base}/compat/chat/completions \\`);
    expect(s.curl).toContain(`-H "Authorization: Bearer ${token}"`);
    const body = /-d '(.*)'$/.exec(s.curl)![1];
    expect(JSON.parse(body)).toEqual({ model: 'smart', messages: [{ role: 'user', content: 'Hello' }] });
  });
  it('points the SDKs at /compat with the right argument names', () => {
    expect(s['openai-js']).toContain(`new OpenAI({ baseURL: "${base}/compat", apiKey: "${token}" })`);
    expect(s['openai-python']).toContain(`OpenAI(base_url="${base}/compat", api_key="${token}")`);
    expect(s['anthropic-python']).toContain(`Anthropic(base_url="${base}/compat", api_key="${token}")`);
    expect(s['anthropic-python']).toContain('model="claude-sonnet-4-5", max_tokens=1024');
    expect(s['anthropic-js']).toContain(`new Anthropic({ baseURL: "${base}/compat", apiKey: "${token}" })`);
    expect(s['anthropic-js']).toContain('model: "claude-sonnet-4-5", max_tokens: 1024');
  });
  it('sets Claude Code up through the environment', () => {
    expect(s['claude-code'].split('\n')).toEqual([`export ANTHROPIC_BASE_URL=${base}/compat`, `export ANTHROPIC_AUTH_TOKEN=${token}`, 'claude']);
  });
});

describe('snippetModel', () => {
  it('prefers a route, then an enabled key model, then a default', () => {
    expect(snippetModel([{ name: 'smart' }], [])).toBe('smart');
    expect(snippetModel([], [{ provider: 'openai', models: ['x'], disabled: true }, { provider: 'anthropic', models: ['claude-sonnet-4-5'] }])).toBe('anthropic/claude-sonnet-4-5');
    expect(snippetModel([], [])).toBe('openai/gpt-4o-mini');
  });
});
