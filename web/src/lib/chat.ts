// One turn of the Playground: the conversation sent through a door of the
// gateway (lib/doors) with fetch, streamed or not; a streamed answer is
// rendered token by token from the SSE events. The turn is timed and keeps
// its usage and request id.

import { doorRequest, errorMessage, readAnswer, streamReader, type ChatMessage, type Door, type SamplingOptions } from './doors';
import { SSEParser, type Usage } from './sse';

export type { ChatMessage } from './doors';

export interface ChatResult {
  content: string;
  status: number;
  /** requestId is x-sluice-request-id: the id of the request's log. */
  requestId: string | null;
  /** served is the provider/model that answered, after fallbacks (x-sluice-provider, x-sluice-model); null when the gateway did not say. */
  served: string | null;
  usage?: Usage;
  /** ttftMs: time to the first content (streamed answers); latencyMs: to the end of the answer. */
  ttftMs?: number;
  latencyMs: number;
  finishReason?: string;
  error?: string;
  cache?: string | null;
}

export interface ChatOptions {
  door: Door;
  /** url is the door's path on the gateway (doorURL). */
  url: string;
  token: string;
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  /** options are the sampling settings (temperature, max tokens); absent ones are the model's defaults. */
  options?: SamplingOptions;
  signal?: AbortSignal;
  onDelta?: (text: string) => void;
  fetchImpl?: typeof fetch;
  now?: () => number;
}

/** sendChat sends the conversation through the door and resolves when the answer (or the stream) ends, or fails. */
export async function sendChat(o: ChatOptions): Promise<ChatResult> {
  const now = o.now ?? (() => performance.now());
  const f = o.fetchImpl ?? fetch;
  const req = doorRequest(o.door, o.model, o.messages, o.stream, o.options);
  const t0 = now();
  const res = await f(o.url, {
    method: 'POST',
    headers: { ...req.headers, Authorization: `Bearer ${o.token}` },
    body: JSON.stringify(req.body),
    signal: o.signal,
    credentials: 'omit',
    cache: 'no-store',
  });
  const out: ChatResult = {
    content: '',
    status: res.status,
    requestId: res.headers.get('x-sluice-request-id'),
    served: servedBy(res.headers),
    cache: res.headers.get('x-sluice-cache'),
    latencyMs: 0,
  };
  if (!res.ok || !res.body) {
    out.error = errorMessage(res.status, await res.text().catch(() => ''));
    out.latencyMs = now() - t0;
    return out;
  }
  if (!o.stream) {
    const text = await res.text();
    out.latencyMs = now() - t0;
    let j: unknown;
    try {
      j = JSON.parse(text);
    } catch {
      out.error = 'the gateway answered with a body that is not JSON';
      return out;
    }
    Object.assign(out, readAnswer(o.door.api, j));
    if (out.content) o.onDelta?.(out.content);
    return out;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const parser = new SSEParser();
  const read = streamReader(o.door.api);
  const take = (events: ReturnType<SSEParser['push']>) => {
    for (const ev of events) {
      const d = read(ev);
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

/** servedBy reads the target that answered from the gateway's x-sluice-provider and x-sluice-model headers. */
export function servedBy(h: Headers): string | null {
  const p = h.get('x-sluice-provider');
  const m = h.get('x-sluice-model');
  if (!m) return null;
  return p ? `${p}/${m}` : m;
}
