import { describe, expect, it } from 'vitest';
import { pyValue, requestCode } from './code';
import { doorByID } from './doors';

const base = '/v1/acme/prod/compat';
const convo = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: "What's new?" },
];

describe('requestCode', () => {
  it('writes the current chat request as curl, Python and JavaScript with the OpenAI SDK', () => {
    const c = requestCode(doorByID('chat'), 'https://gw.example', base, 'openai/gpt-4o-mini', convo, true, { temperature: 0.2, maxTokens: 256 });
    expect(c.sdk).toBe('openai');
    expect(c.curl).toContain('curl -N https://gw.example/v1/acme/prod/compat/chat/completions');
    expect(c.curl).toContain('-H "Authorization: Bearer $SLUICE_TOKEN"');
    expect(c.curl).toContain(`"temperature":0.2,"max_tokens":256,"stream":true`);
    expect(c.curl).toContain(`What'\\''s new?`);
    expect(c.python).toContain('client = OpenAI(base_url="https://gw.example/v1/acme/prod/compat", api_key=os.environ["SLUICE_TOKEN"])');
    expect(c.python).toContain('    temperature=0.2,\n    max_tokens=256,\n    stream=True,');
    expect(c.python).toContain('stream_options={"include_usage": True}');
    expect(c.js).toContain("import OpenAI from 'openai';");
    expect(c.js).toContain('apiKey: process.env.SLUICE_TOKEN');
    expect(c.js).toContain('await client.chat.completions.create({');
    expect(c.js).toContain('"max_tokens": 256');
    expect(c.js).toContain('for await (const event of r)');
  });

  it('uses max_output_tokens on Responses and the Anthropic SDK on Messages', () => {
    const r = requestCode(doorByID('responses'), 'https://gw.example', base, 'smart', convo, false, { maxTokens: 64 });
    expect(r.curl).toContain('"max_output_tokens":64');
    expect(r.python).toContain('r = client.responses.create(');
    expect(r.python).toContain('instructions="Be brief."');
    const m = requestCode(doorByID('anthropic'), 'https://gw.example', base, 'claude-sonnet-4-5', convo, false, {});
    expect(m.sdk).toBe('anthropic');
    expect(m.python).toContain('Anthropic(base_url="https://gw.example/v1/acme/prod/anthropic"');
    expect(m.python).toContain('max_tokens=1024');
    expect(m.js).toContain("import Anthropic from '@anthropic-ai/sdk';");
  });

  it('never holds a token: only the SLUICE_TOKEN placeholder', () => {
    const c = requestCode(doorByID('chat'), 'https://gw.example', base, 'm', convo, false);
    for (const text of [c.curl, c.python, c.js]) expect(text).not.toMatch(/sk-sl-/);
  });
});

describe('pyValue', () => {
  it('writes JSON as Python literals', () => {
    expect(pyValue({ a: true, b: null, c: [1, 'x'] })).toBe('{"a": True, "b": None, "c": [\n    1,\n    "x",\n]}');
  });
});
