// An incremental parser of text/event-stream (the WHATWG rules): feed it
// text as it arrives, in pieces of any size, and it returns the events
// completed so far. Used by the Playground to render streamed answers.

export interface SSEEvent {
  /** The event type; "message" when the stream names none. */
  event: string;
  /** The data lines joined by "\n". */
  data: string;
  id?: string;
}

export class SSEParser {
  private buf = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  /** A chunk ended with "\r": a following "\n" belongs to the same line end. */
  private pendingCR = false;

  /** push feeds text and returns the events it completed. */
  push(text: string): SSEEvent[] {
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.pendingCR = false;
    this.buf += text;
    const out: SSEEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone "\r" at the end may be the first half of "\r\n".
      if (m[0] === '\r' && m.index === this.buf.length - 1) {
        this.pendingCR = true;
      }
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  /** end flushes an event left without its blank line when the stream closes. */
  end(): SSEEvent[] {
    const out: SSEEvent[] = [];
    if (this.buf) {
      const ev = this.line(this.buf);
      this.buf = '';
      if (ev) out.push(ev);
    }
    const ev = this.dispatch();
    if (ev) out.push(ev);
    return out;
  }

  private line(line: string): SSEEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
    }
    return null;
  }

  private dispatch(): SSEEvent | null {
    if (this.data.length === 0) {
      this.event = '';
      return null;
    }
    const ev: SSEEvent = { event: this.event || 'message', data: this.data.join('\n') };
    if (this.id !== undefined) ev.id = this.id;
    this.data = [];
    this.event = '';
    return ev;
  }
}

/** Usage as OpenAI reports it; the Playground reads every door's usage into this shape. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  /** The details a door reports, when not zero: prompt tokens read from and written to the cache, output tokens spent reasoning. */
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
}

/** ChatDelta is what one chunk of a chat completion stream adds. */
export interface ChatDelta {
  content: string;
  usage?: Usage;
  finishReason?: string;
  error?: string;
  done: boolean;
}

/**
 * chatDelta interprets one SSE event of an OpenAI chat completion stream:
 * the text it adds, the usage (the last chunk, with include_usage), an error
 * event (a content rule ending the stream) or the final [DONE].
 */
export function chatDelta(ev: SSEEvent): ChatDelta {
  if (ev.data === '[DONE]') return { content: '', done: true };
  let j: any;
  try {
    j = JSON.parse(ev.data);
  } catch {
    return { content: '', done: false, error: 'the gateway sent an event that is not JSON' };
  }
  if (j?.error) {
    return { content: '', done: false, error: String(j.error.message ?? j.error.code ?? 'stream error') };
  }
  const choice = Array.isArray(j?.choices) ? j.choices[0] : undefined;
  const d: ChatDelta = { content: typeof choice?.delta?.content === 'string' ? choice.delta.content : '', done: false };
  if (choice?.finish_reason) d.finishReason = choice.finish_reason;
  if (j?.usage && typeof j.usage.prompt_tokens === 'number') d.usage = j.usage;
  return d;
}
