import { describe, expect, it } from 'vitest';
import { sendChat } from './chat';
import { doorByID } from './doors';

function sseResponse(chunks: string[], headers: Record<string, string> = {}): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', ...headers } });
}

describe('sendChat', () => {
  it('renders deltas as they arrive and collects usage, timing and the request id', async () => {
    let t = 0;
    const seen: string[] = [];
    let sent: any;
    const res = await sendChat({
      door: doorByID('chat'),
      stream: true,
      url: '/v1/acme/prod/compat/chat/completions',
      token: 'sk-sl-play',
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      options: { temperature: 0.3, maxTokens: 50 },
      now: () => (t += 10),
      onDelta: (d: string) => seen.push(d),
      fetchImpl: async (_u: RequestInfo | URL, init?: RequestInit) => {
        sent = init;
        return sseResponse(
          ['data: {"choices":[{"delta":{"content":"Hel"}}]}\n\nda', 'ta: {"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n', 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\ndata: [DONE]\n\n'],
          { 'x-sluice-request-id': '0193-req', 'x-sluice-cache': 'MISS', 'x-sluice-provider': 'openai', 'x-sluice-model': 'gpt-4o-mini-2024-07-18' },
        );
      },
    });
    expect(seen).toEqual(['Hel', 'lo']);
    expect(res).toMatchObject({ content: 'Hello', status: 200, requestId: '0193-req', served: 'openai/gpt-4o-mini-2024-07-18', usage: { prompt_tokens: 3, completion_tokens: 2 }, finishReason: 'stop' });
    expect(res.ttftMs).toBeGreaterThan(0);
    expect(res.latencyMs).toBeGreaterThan(res.ttftMs!);
    expect(sent.headers.Authorization).toBe('Bearer sk-sl-play');
    expect(JSON.parse(sent.body)).toMatchObject({ model: 'openai/gpt-4o-mini', temperature: 0.3, max_tokens: 50, stream: true, stream_options: { include_usage: true } });
  });

  it('reports an error answer in the contract shape', async () => {
    const res = await sendChat({
      door: doorByID('chat'),
      stream: true,
      url: '/x',
      token: 't',
      model: 'm',
      messages: [],
      fetchImpl: async () =>
        new Response(JSON.stringify({ error: { type: 'insufficient_quota', code: 'budget_exceeded', message: 'the gateway budget is spent' } }), {
          status: 429,
          headers: { 'x-sluice-request-id': 'r1' },
        }),
    });
    expect(res).toMatchObject({ status: 429, requestId: 'r1', error: 'the gateway budget is spent (budget_exceeded)' });
  });
  it('sends a Messages request and reads the whole answer', async () => {
    let url = '';
    let sent: any;
    const seen: string[] = [];
    const res = await sendChat({
      door: doorByID('anthropic'),
      stream: false,
      url: '/v1/acme/prod/anthropic/v1/messages',
      token: 'sk-sl-play',
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'hi' }],
      onDelta: (d: string) => seen.push(d),
      fetchImpl: async (u: RequestInfo | URL, init?: RequestInit) => {
        url = String(u);
        sent = init;
        return new Response(
          JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'Hello' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2 } }),
          { status: 200, headers: { 'content-type': 'application/json', 'x-sluice-request-id': 'r-msg' } },
        );
      },
    });
    expect(url).toBe('/v1/acme/prod/anthropic/v1/messages');
    expect(sent.headers).toMatchObject({ Authorization: 'Bearer sk-sl-play', 'anthropic-version': '2023-06-01', Accept: 'application/json' });
    expect(JSON.parse(sent.body)).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect(res).toMatchObject({ content: 'Hello', status: 200, requestId: 'r-msg', finishReason: 'end_turn', usage: { prompt_tokens: 3, completion_tokens: 2 } });
    expect(res.ttftMs).toBeUndefined();
    expect(seen).toEqual(['Hello']);
  });

  it('streams a Responses answer and reports an error in Anthropic’s shape', async () => {
    const res = await sendChat({
      door: doorByID('responses'),
      stream: true,
      url: '/v1/acme/prod/compat/responses',
      token: 't',
      model: 'smart',
      messages: [{ role: 'user', content: 'hi' }],
      fetchImpl: async () =>
        sseResponse([
          'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n',
          'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":4,"output_tokens":1}}}\n\n',
        ]),
    });
    expect(res).toMatchObject({ content: 'Hi', finishReason: 'completed', usage: { prompt_tokens: 4, completion_tokens: 1 } });

    const bad = await sendChat({
      door: doorByID('messages'),
      stream: true,
      url: '/x',
      token: 't',
      model: 'm',
      messages: [],
      fetchImpl: async () => new Response('{"type":"error","error":{"type":"rate_limit_error","message":"slow down","code":"rate_limit_exceeded"}}', { status: 429 }),
    });
    expect(bad).toMatchObject({ status: 429, error: 'slow down (rate_limit_exceeded)' });
  });
});
