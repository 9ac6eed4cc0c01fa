// The front doors the Playground sends through (CONTRACT §12). A door is a
// path of the gateway and the API spoken there: each builds its API's
// request from the conversation — the same body a client of that door sends,
// so the request runs the same server path and is logged with the door's
// operation — and reads its API's answer, whole or streamed, into one shape
// (text, usage, finish reason, error).

import { chatDelta, type ChatDelta, type SSEEvent, type Usage } from './sse';

/** DoorAPI is the API a door speaks; it is also the log record's operation. */
export type DoorAPI = 'chat' | 'messages' | 'responses';

export interface Door {
  id: string;
  label: string;
  api: DoorAPI;
  /** path is the door's path under the gateway's base /v1/{tenant}/{gateway}. */
  path: string;
  /** sdkBase is the segment an SDK's base URL ends with (after the gateway's base). */
  sdkBase: string;
  /** native is the provider a native door speaks to; its model is the provider's own id. */
  native?: string;
}

export const DOORS: readonly Door[] = [
  { id: 'chat', label: 'Chat Completions', api: 'chat', path: 'compat/chat/completions', sdkBase: 'compat' },
  { id: 'messages', label: 'Anthropic Messages', api: 'messages', path: 'compat/v1/messages', sdkBase: 'compat' },
  { id: 'responses', label: 'OpenAI Responses', api: 'responses', path: 'compat/responses', sdkBase: 'compat' },
  { id: 'anthropic', label: 'Anthropic Messages, native', api: 'messages', path: 'anthropic/v1/messages', sdkBase: 'anthropic', native: 'anthropic' },
  { id: 'openai', label: 'OpenAI Responses, native', api: 'responses', path: 'openai/responses', sdkBase: 'openai', native: 'openai' },
];

/** DoorTarget is what the Playground sends to: a route, or a provider's model. */
export interface DoorTarget {
  provider: string;
  model: string;
  route: string;
}

/**
 * doorsFor lists the doors a target can be reached through: the /compat
 * doors always; a native door only for a model of its own provider (a
 * native door takes the provider's model id, never a route).
 */
export function doorsFor(t: DoorTarget): Door[] {
  return DOORS.filter((d) => !d.native || (!t.route && t.provider === d.native));
}

/** doorByID finds a door; unknown ids fall back to the chat door. */
export function doorByID(id: string): Door {
  return DOORS.find((d) => d.id === id) ?? DOORS[0];
}

/** gatewayBase turns a playground token's basePath (/v1/{tenant}/{gateway}/compat) into /v1/{tenant}/{gateway}. */
export function gatewayBase(basePath: string): string {
  return basePath.replace(/\/compat\/?$/, '');
}

/** doorURL is the path a request through the door goes to. */
export function doorURL(basePath: string, d: Door): string {
  return `${gatewayBase(basePath)}/${d.path}`;
}

/** doorModel is the model field the door takes for the target. */
export function doorModel(d: Door, t: DoorTarget): string {
  if (d.native) return t.model;
  return t.route ? t.route : `${t.provider}/${t.model}`;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** MESSAGES_MAX_TOKENS is the max_tokens of a Messages request, which that API requires. */
export const MESSAGES_MAX_TOKENS = 1024;

/** ANTHROPIC_VERSION is the anthropic-version the Anthropic SDKs send. */
export const ANTHROPIC_VERSION = '2023-06-01';

export interface DoorRequest {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** SamplingOptions are the Playground's optional request settings; absent ones are left to the model's defaults. */
export interface SamplingOptions {
  temperature?: number;
  /** maxTokens caps the answer: max_tokens (Chat Completions, Messages) or max_output_tokens (Responses). */
  maxTokens?: number;
}

/**
 * doorRequest builds the door's request for a conversation: system
 * messages become Messages' system and Responses' instructions; the turns
 * become messages or input items.
 */
export function doorRequest(d: Door, model: string, messages: ChatMessage[], stream: boolean, opts: SamplingOptions = {}): DoorRequest {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: stream ? 'text/event-stream' : 'application/json' };
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const turns = messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content }));
  const temp = opts.temperature != null ? { temperature: opts.temperature } : {};
  const max = opts.maxTokens;
  switch (d.api) {
    case 'chat':
      return { headers, body: { model, messages, ...temp, ...(max != null ? { max_tokens: max } : {}), stream, ...(stream ? { stream_options: { include_usage: true } } : {}) } };
    case 'messages':
      headers['anthropic-version'] = ANTHROPIC_VERSION;
      return { headers, body: { model, max_tokens: max ?? MESSAGES_MAX_TOKENS, ...temp, ...(system ? { system } : {}), messages: turns, stream } };
    case 'responses':
      return { headers, body: { model, ...(system ? { instructions: system } : {}), input: turns, ...temp, ...(max != null ? { max_output_tokens: max } : {}), stream, store: false } };
  }
}

/** Answer is what a whole (not streamed) answer of any door holds. */
export interface Answer {
  content: string;
  usage?: Usage;
  finishReason?: string;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** usageOf reads a door's usage object into the chat shape (prompt and completion tokens, with their details). */
export function usageOf(api: DoorAPI, u: any): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  let out: Usage;
  switch (api) {
    case 'chat':
      if (typeof u.prompt_tokens !== 'number') return undefined;
      out = {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: num(u.completion_tokens),
        cache_read_tokens: num(u.prompt_tokens_details?.cached_tokens),
        reasoning_tokens: num(u.completion_tokens_details?.reasoning_tokens),
      };
      break;
    case 'messages': {
      // Messages' input_tokens leaves out the tokens read from or written to the cache.
      const read = num(u.cache_read_input_tokens);
      const write = num(u.cache_creation_input_tokens);
      out = { prompt_tokens: num(u.input_tokens) + read + write, completion_tokens: num(u.output_tokens), cache_read_tokens: read, cache_write_tokens: write };
      break;
    }
    case 'responses':
      if (typeof u.input_tokens !== 'number') return undefined;
      out = {
        prompt_tokens: u.input_tokens,
        completion_tokens: num(u.output_tokens),
        cache_read_tokens: num(u.input_tokens_details?.cached_tokens),
        cache_write_tokens: num(u.input_tokens_details?.cache_write_tokens),
        reasoning_tokens: num(u.output_tokens_details?.reasoning_tokens),
      };
      break;
  }
  out.total_tokens = out.prompt_tokens + out.completion_tokens;
  for (const k of ['cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens'] as const) if (!out[k]) delete out[k];
  return out;
}

/** readAnswer reads a door's whole answer. */
export function readAnswer(api: DoorAPI, j: any): Answer {
  switch (api) {
    case 'chat': {
      const c = Array.isArray(j?.choices) ? j.choices[0] : undefined;
      return { content: typeof c?.message?.content === 'string' ? c.message.content : '', usage: usageOf(api, j?.usage), finishReason: c?.finish_reason ?? undefined };
    }
    case 'messages': {
      const blocks: any[] = Array.isArray(j?.content) ? j.content : [];
      const content = blocks
        .filter((b) => b?.type === 'text')
        .map((b) => String(b.text ?? ''))
        .join('');
      return { content, usage: usageOf(api, j?.usage), finishReason: j?.stop_reason ?? undefined };
    }
    case 'responses':
      return { content: responsesText(j), usage: usageOf(api, j?.usage), finishReason: responsesFinish(j) };
  }
}

function responsesText(r: any): string {
  const items: any[] = Array.isArray(r?.output) ? r.output : [];
  return items
    .filter((it) => it?.type === 'message' && Array.isArray(it.content))
    .flatMap((it) => it.content)
    .filter((p: any) => p?.type === 'output_text')
    .map((p: any) => String(p.text ?? ''))
    .join('');
}

function responsesFinish(r: any): string | undefined {
  if (r?.status === 'incomplete') return r.incomplete_details?.reason ?? 'incomplete';
  return r?.status ?? undefined;
}

/**
 * streamReader returns the interpreter of one stream of the door's API:
 * called with each SSE event in order, it says what the event adds. The
 * Messages API spreads usage over message_start and message_delta, so the
 * reader keeps the usage seen so far and reports the merged whole.
 */
export function streamReader(api: DoorAPI): (ev: SSEEvent) => ChatDelta {
  if (api === 'chat') {
    return (ev) => {
      const d = chatDelta(ev);
      if (d.usage) d.usage = usageOf('chat', d.usage);
      return d;
    };
  }
  let usage: Record<string, unknown> = {};
  return (ev) => {
    let j: any;
    try {
      j = JSON.parse(ev.data);
    } catch {
      return { content: '', done: false, error: 'the gateway sent an event that is not JSON' };
    }
    const type = typeof j?.type === 'string' ? j.type : ev.event;
    if (type === 'error') {
      const e = j?.error ?? j;
      return { content: '', done: false, error: String(e?.message ?? e?.code ?? 'stream error') };
    }
    if (api === 'messages') {
      const d: ChatDelta = { content: '', done: type === 'message_stop' };
      if (type === 'content_block_delta' && j.delta?.type === 'text_delta') d.content = String(j.delta.text ?? '');
      if (type === 'message_delta' && j.delta?.stop_reason) d.finishReason = j.delta.stop_reason;
      const u = type === 'message_start' ? j.message?.usage : j?.usage;
      if (u && typeof u === 'object') {
        usage = { ...usage, ...u };
        d.usage = usageOf('messages', usage);
      }
      return d;
    }
    const d: ChatDelta = { content: '', done: false };
    if (type === 'response.output_text.delta') d.content = String(j.delta ?? '');
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      d.done = true;
      d.usage = usageOf('responses', j.response?.usage);
      d.finishReason = responsesFinish(j.response);
      if (type === 'response.failed') d.error = String(j.response?.error?.message ?? 'the response failed');
    }
    return d;
  };
}

/** errorMessage reads an error answer of any door (§3's shape and Anthropic's both carry error.message and error.code). */
export function errorMessage(status: number, text: string): string {
  try {
    const j = JSON.parse(text);
    if (j?.error?.message) return `${j.error.message} (${j.error.code ?? j.error.type ?? status})`;
  } catch {
    /* not JSON */
  }
  return `The gateway answered ${status}.`;
}

/** Snippet is the code a client sends the same request with. */
export interface Snippet {
  curl: string;
  sdk: string;
  /** sdkName names the SDK and its language. */
  sdkName: string;
}

/**
 * doorSnippet shows how to send the request through the door from outside
 * the dashboard: curl, and the door's Python SDK. The token is read from
 * $SLUICE_TOKEN; the playground's own token is never shown.
 */
export function doorSnippet(d: Door, origin: string, basePath: string, model: string, stream: boolean): Snippet {
  const sample: ChatMessage[] = [{ role: 'user', content: 'Hello' }];
  const req = doorRequest(d, model, sample, stream);
  const hdrs = ['Authorization: Bearer $SLUICE_TOKEN', ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`)];
  const curl = [
    `curl ${stream ? '-N ' : ''}${origin}${doorURL(basePath, d)} \\`,
    ...hdrs.map((h) => `  -H "${h}" \\`),
    `  -d '${JSON.stringify(req.body)}'`,
  ].join('\n');
  const base = JSON.stringify(`${origin}${gatewayBase(basePath)}/${d.sdkBase}`);
  const m = JSON.stringify(model);
  const streamArg = stream ? ', stream=True' : '';
  const loop = stream ? 'for event in r:\n    print(event)' : 'print(r)';
  if (d.api === 'messages') {
    return {
      sdkName: 'Python, anthropic',
      curl,
      sdk: [
        'import os',
        'from anthropic import Anthropic',
        '',
        `client = Anthropic(base_url=${base}, api_key=os.environ["SLUICE_TOKEN"])`,
        `r = client.messages.create(model=${m}, max_tokens=${MESSAGES_MAX_TOKENS}, messages=[{"role": "user", "content": "Hello"}]${streamArg})`,
        loop,
      ].join('\n'),
    };
  }
  const call = d.api === 'chat' ? `client.chat.completions.create(model=${m}, messages=[{"role": "user", "content": "Hello"}]${streamArg})` : `client.responses.create(model=${m}, input="Hello"${streamArg})`;
  return {
    sdkName: 'Python, openai',
    curl,
    sdk: ['import os', 'from openai import OpenAI', '', `client = OpenAI(base_url=${base}, api_key=os.environ["SLUICE_TOKEN"])`, `r = ${call}`, loop].join('\n'),
  };
}
