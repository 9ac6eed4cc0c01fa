// A streamed chat completion through a gateway's OpenAI-compatible path,
// as the Playground sends it: fetch with stream: true, the answer rendered
// token by token from the SSE events, timed, with its usage and request id.

import { chatDelta, SSEParser, type Usage } from './sse';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatResult {
  content: string;
  status: number;
  /** requestId is x-sluice-request-id: the id of the request's log. */
  requestId: string | null;
  usage?: Usage;
  /** ttftMs: time to the first content; latencyMs: to the end of the stream. */
  ttftMs?: number;
  latencyMs: number;
  finishReason?: string;
  error?: string;
  cache?: string | null;
}

export interface ChatOptions {
  url: string;
  token: string;
  model: string;
  messages: ChatMessage[];
  signal?: AbortSignal;
  onDelta?: (text: string) => void;
  fetchImpl?: typeof fetch;
  now?: () => number;
}

/** streamChat sends the conversation and resolves when the stream ends (or fails). */
export async function streamChat(o: ChatOptions): Promise<ChatResult> {
  const now = o.now ?? (() => performance.now());
  const f = o.fetchImpl ?? fetch;
  const t0 = now();
  const res = await f(o.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${o.token}`, Accept: 'text/event-stream' },
    body: JSON.stringify({ model: o.model, messages: o.messages, stream: true, stream_options: { include_usage: true } }),
    signal: o.signal,
    credentials: 'omit',
    cache: 'no-store',
  });
  const out: ChatResult = {
    content: '',
    status: res.status,
    requestId: res.headers.get('x-sluice-request-id'),
    cache: res.headers.get('x-sluice-cache'),
    latencyMs: 0,
  };
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    let msg = `The gateway answered ${res.status}.`;
    try {
      const j = JSON.parse(text);
      if (j?.error?.message) msg = `${j.error.message} (${j.error.code ?? res.status})`;
    } catch {
      /* not JSON */
    }
    out.error = msg;
    out.latencyMs = now() - t0;
    return out;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const parser = new SSEParser();
  const take = (events: ReturnType<SSEParser['push']>) => {
    for (const ev of events) {
      const d = chatDelta(ev);
      if (d.error) out.error = d.error;
      if (d.content) {
        if (out.ttftMs === undefined) out.ttftMs = now() - t0;
        out.content += d.content;
        o.onDelta?.(d.content);
      }
      if (d.usage) out.usage = d.usage;
      if (d.finishReason) out.finishReason = d.finishReason;
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    take(parser.push(dec.decode(value, { stream: true })));
  }
  take(parser.push(dec.decode()));
  take(parser.end());
  out.latencyMs = now() - t0;
  return out;
}

/** chatCost prices usage with a price per million tokens; null when there is no price. */
export function chatCost(usage: Usage | undefined, price: { inputPerMtok: number; outputPerMtok: number } | null | undefined): number | null {
  if (!usage || !price) return null;
  return (usage.prompt_tokens * price.inputPerMtok + usage.completion_tokens * price.outputPerMtok) / 1e6;
}
