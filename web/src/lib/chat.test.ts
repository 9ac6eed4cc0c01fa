import { describe, expect, it } from 'vitest';
import { chatCost, streamChat } from './chat';

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

describe('streamChat', () => {
  it('renders deltas as they arrive and collects usage, timing and the request id', async () => {
    let t = 0;
    const seen: string[] = [];
    let sent: any;
    const res = await streamChat({
      url: '/v1/acme/prod/compat/chat/completions',
      token: 'sk-sl-play',
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      now: () => (t += 10),
      onDelta: (d) => seen.push(d),
      fetchImpl: async (_u, init) => {
        sent = init;
        return sseResponse(
          ['data: {"choices":[{"delta":{"content":"Hel"}}]}\n\nda', 'ta: {"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n', 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\ndata: [DONE]\n\n'],
          { 'x-sluice-request-id': '0193-req', 'x-sluice-cache': 'MISS' },
        );
      },
    });
    expect(seen).toEqual(['Hel', 'lo']);
    expect(res).toMatchObject({ content: 'Hello', status: 200, requestId: '0193-req', usage: { prompt_tokens: 3, completion_tokens: 2 }, finishReason: 'stop' });
    expect(res.ttftMs).toBeGreaterThan(0);
    expect(res.latencyMs).toBeGreaterThan(res.ttftMs!);
    expect(sent.headers.Authorization).toBe('Bearer sk-sl-play');
    expect(JSON.parse(sent.body)).toMatchObject({ model: 'openai/gpt-4o-mini', stream: true, stream_options: { include_usage: true } });
  });

  it('reports an error answer in the contract shape', async () => {
    const res = await streamChat({
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
});

describe('chatCost', () => {
  it('prices usage per million tokens', () => {
    expect(chatCost({ prompt_tokens: 1_000_000, completion_tokens: 500_000 }, { inputPerMtok: 0.15, outputPerMtok: 0.6 })).toBeCloseTo(0.45);
    expect(chatCost({ prompt_tokens: 6, completion_tokens: 9 }, null)).toBeNull();
    expect(chatCost(undefined, { inputPerMtok: 1, outputPerMtok: 1 })).toBeNull();
  });
});
