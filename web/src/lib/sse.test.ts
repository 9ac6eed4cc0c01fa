import { describe, expect, it } from 'vitest';
import { chatDelta, SSEParser, type SSEEvent } from './sse';

const stream =
  ': keep-alive\n\n' +
  'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n' +
  'data: {"choices":[{"delta":{"content":"Hello"}}]}\r\n\r\n' +
  'event: message\r\ndata: {"choices":[{"delta":{"content":" wor"}}]}\r\rdata: {"choices":[{"delta":{"content":"ld"},"finish_reason":"stop"}]}\n\n' +
  'id: 7\ndata: {"choices":[],"usage":{"prompt_tokens":6,"completion_tokens":9,"total_tokens":15}}\n\n' +
  'data: [DONE]\n\n';

function parseAll(chunks: string[]): SSEEvent[] {
  const p = new SSEParser();
  return [...chunks.flatMap((c) => p.push(c)), ...p.end()];
}

describe('SSEParser', () => {
  it('parses a whole stream', () => {
    const evs = parseAll([stream]);
    expect(evs.map((e) => e.data.slice(0, 12))).toEqual(['{"choices":[', '{"choices":[', '{"choices":[', '{"choices":[', '{"choices":[', '[DONE]']);
    expect(evs[4].id).toBe('7');
    expect(evs.every((e) => e.event === 'message')).toBe(true);
  });

  it('gives the same events however the stream is cut', () => {
    const want = parseAll([stream]);
    for (let i = 1; i < stream.length; i++) {
      expect(parseAll([stream.slice(0, i), stream.slice(i)]), `cut at ${i}`).toEqual(want);
    }
    expect(parseAll([...stream])).toEqual(want);
  });

  it('joins data lines and names events', () => {
    expect(parseAll(['event: error\ndata: a\ndata: b\n\n'])).toEqual([{ event: 'error', data: 'a\nb' }]);
    expect(parseAll(['data:no space\n\n'])).toEqual([{ event: 'message', data: 'no space' }]);
    expect(parseAll(['event: ping\n\n'])).toEqual([]);
  });

  it('flushes an unterminated last event at the end', () => {
    expect(parseAll(['data: tail'])).toEqual([{ event: 'message', data: 'tail' }]);
  });
});

describe('chatDelta', () => {
  it('reads content, finish reason, usage and done', () => {
    const ds = parseAll([stream]).map(chatDelta);
    expect(ds.map((d) => d.content).join('')).toBe('Hello world');
    expect(ds.find((d) => d.finishReason)?.finishReason).toBe('stop');
    expect(ds.find((d) => d.usage)?.usage).toEqual({ prompt_tokens: 6, completion_tokens: 9, total_tokens: 15 });
    expect(ds[ds.length - 1].done).toBe(true);
  });
  it('reports error events and garbage', () => {
    expect(chatDelta({ event: 'message', data: '{"error":{"message":"content blocked","code":"content_blocked"}}' }).error).toBe('content blocked');
    expect(chatDelta({ event: 'message', data: 'not json' }).error).toMatch(/not JSON/);
  });
});
