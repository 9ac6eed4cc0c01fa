import { describe, expect, it } from 'vitest';
// The doors' answers as the gateway writes them: the golden files of the
// server's door encoders (proxy/door_messages_test.go, door_responses_test.go),
// read as text by Vite (?raw), so these tests read the server's real bytes.
import messagesAnswer from '../../../proxy/testdata/messages/answer_text.messages?raw';
import messagesCut from '../../../proxy/testdata/messages/stream_cut.events?raw';
import messagesStream from '../../../proxy/testdata/messages/stream_text.events?raw';
import responsesAnswer from '../../../proxy/testdata/responses/answer_text.response?raw';
import responsesCut from '../../../proxy/testdata/responses/stream_cut.events?raw';
import responsesStream from '../../../proxy/testdata/responses/stream_text.events?raw';
import { DOORS, doorByID, doorModel, doorRequest, doorsFor, doorSnippet, doorURL, errorMessage, readAnswer, streamReader, type DoorAPI } from './doors';
import { SSEParser } from './sse';

const base = '/v1/acme/prod/compat';
const route = { provider: 'openai', model: 'gpt-4o-mini', route: 'smart' };
const claude = { provider: 'anthropic', model: 'claude-sonnet-4-5', route: '' };
const gpt = { provider: 'openai', model: 'gpt-4o-mini', route: '' };
const convo = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Hi' },
  { role: 'assistant' as const, content: 'Hello.' },
  { role: 'user' as const, content: 'Again' },
];

/** readStream runs a whole event stream through the door's reader. */
function readStream(api: DoorAPI, text: string) {
  const p = new SSEParser();
  const read = streamReader(api);
  const out = { content: '', usage: undefined as unknown, finishReason: undefined as string | undefined, error: undefined as string | undefined, done: false };
  for (const ev of [...p.push(text), ...p.end()]) {
    const d = read(ev);
    out.content += d.content;
    if (d.usage) out.usage = d.usage;
    if (d.finishReason) out.finishReason = d.finishReason;
    if (d.error) out.error = d.error;
    if (d.done) out.done = true;
  }
  return out;
}

describe('doors', () => {
  it('lists the compat doors for every target and a native door only for a model of its provider', () => {
    expect(doorsFor(route).map((d) => d.id)).toEqual(['chat', 'messages', 'responses']);
    expect(doorsFor(claude).map((d) => d.id)).toEqual(['chat', 'messages', 'responses', 'anthropic']);
    expect(doorsFor(gpt).map((d) => d.id)).toEqual(['chat', 'messages', 'responses', 'openai']);
    expect(doorsFor({ provider: 'gemini', model: 'gemini-2.5-flash', route: '' }).map((d) => d.id)).toEqual(['chat', 'messages', 'responses']);
    expect(doorByID('nope').id).toBe('chat');
  });

  it('sends each door to its path with the model it takes', () => {
    const paths = Object.fromEntries(DOORS.map((d) => [d.id, doorURL(base, d)]));
    expect(paths).toEqual({
      chat: '/v1/acme/prod/compat/chat/completions',
      messages: '/v1/acme/prod/compat/v1/messages',
      responses: '/v1/acme/prod/compat/responses',
      anthropic: '/v1/acme/prod/anthropic/v1/messages',
      openai: '/v1/acme/prod/openai/responses',
    });
    expect(doorModel(doorByID('messages'), claude)).toBe('anthropic/claude-sonnet-4-5');
    expect(doorModel(doorByID('responses'), route)).toBe('smart');
    expect(doorModel(doorByID('anthropic'), claude)).toBe('claude-sonnet-4-5');
    expect(doorModel(doorByID('openai'), gpt)).toBe('gpt-4o-mini');
  });
});

describe('doorRequest', () => {
  it('chat: the messages as they are, and the usage chunk when streamed', () => {
    const r = doorRequest(doorByID('chat'), 'openai/gpt-4o-mini', convo, true);
    expect(r.body).toEqual({ model: 'openai/gpt-4o-mini', messages: convo, stream: true, stream_options: { include_usage: true } });
    expect(r.headers.Accept).toBe('text/event-stream');
    expect(doorRequest(doorByID('chat'), 'm', convo, false).body).toEqual({ model: 'm', messages: convo, stream: false });
  });

  it('messages: system apart, max_tokens set, anthropic-version sent', () => {
    for (const id of ['messages', 'anthropic']) {
      const r = doorRequest(doorByID(id), 'claude-sonnet-4-5', convo, false);
      expect(r.body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
          { role: 'user', content: 'Again' },
        ],
        stream: false,
      });
      expect(r.headers['anthropic-version']).toBe('2023-06-01');
      expect(r.headers.Accept).toBe('application/json');
    }
    expect(doorRequest(doorByID('messages'), 'm', [{ role: 'user', content: 'Hi' }], true).body).not.toHaveProperty('system');
  });

  it('responses: instructions, input items, stateless', () => {
    const r = doorRequest(doorByID('responses'), 'smart', convo, true);
    expect(r.body).toEqual({
      model: 'smart',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Again' },
      ],
      stream: true,
      store: false,
    });
    expect(r.headers).not.toHaveProperty('anthropic-version');
  });
});

describe('readAnswer', () => {
  it('chat', () => {
    const a = readAnswer('chat', {
      choices: [{ message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } },
    });
    expect(a).toEqual({ content: 'Hello', finishReason: 'stop', usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, cache_read_tokens: 3 } });
  });

  it('messages (the gateway golden): text blocks, usage with the cache reads added to the prompt', () => {
    expect(readAnswer('messages', JSON.parse(messagesAnswer))).toEqual({
      content: 'Hello "there"',
      finishReason: 'end_turn',
      usage: { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127, cache_read_tokens: 100 },
    });
  });

  it('responses (the gateway golden): output_text of the message items and usage details', () => {
    expect(readAnswer('responses', JSON.parse(responsesAnswer))).toEqual({
      content: 'Hello "there"',
      finishReason: 'completed',
      usage: { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127, cache_read_tokens: 100 },
    });
    expect(readAnswer('responses', { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] }).finishReason).toBe('max_output_tokens');
  });
});

describe('streamReader', () => {
  it('messages (the gateway golden): text deltas, usage merged from message_start and message_delta', () => {
    expect(readStream('messages', messagesStream)).toEqual({
      content: 'Hello\n',
      finishReason: 'end_turn',
      usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
      error: undefined,
      done: true,
    });
  });

  it('messages: usage spread over the events as Anthropic sends it (output only in message_delta)', () => {
    const s =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":9,"cache_creation_input_tokens":4,"output_tokens":1}}}\n\n' +
      'event: ping\ndata: {"type":"ping"}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":6}}\n\n';
    expect(readStream('messages', s)).toMatchObject({ content: 'ok', finishReason: 'max_tokens', usage: { prompt_tokens: 13, completion_tokens: 6, cache_write_tokens: 4 } });
  });

  it('responses (the gateway golden): output_text deltas, usage from response.completed', () => {
    expect(readStream('responses', responsesStream)).toEqual({
      content: 'Hello\n',
      finishReason: 'completed',
      usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
      error: undefined,
      done: true,
    });
  });

  it('a stream cut short ends with the door’s error event', () => {
    expect(readStream('messages', messagesCut)).toMatchObject({ content: 'Partial', error: 'the upstream stream broke', done: false });
    expect(readStream('responses', responsesCut)).toMatchObject({ content: 'Partial', error: 'the upstream stream broke', done: false });
    expect(readStream('responses', 'data: {"type":"response.failed","response":{"status":"failed","error":{"message":"no"}}}\n\n')).toMatchObject({ error: 'no', done: true });
    expect(readStream('messages', 'data: nope\n\n').error).toMatch(/not JSON/);
  });

  it('chat: the usage chunk in the common shape', () => {
    const s = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"completion_tokens_details":{"reasoning_tokens":1}}}\n\ndata: [DONE]\n\n';
    expect(readStream('chat', s)).toMatchObject({ content: 'a', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, reasoning_tokens: 1 }, done: true });
  });
});

describe('errorMessage', () => {
  it('reads the §3 shape and Anthropic’s', () => {
    expect(errorMessage(429, '{"error":{"type":"insufficient_quota","code":"budget_exceeded","message":"the gateway budget is spent"}}')).toBe('the gateway budget is spent (budget_exceeded)');
    expect(errorMessage(401, '{"type":"error","error":{"type":"authentication_error","message":"invalid token","code":"invalid_api_key"}}')).toBe('invalid token (invalid_api_key)');
    expect(errorMessage(502, '<html>')).toBe('The gateway answered 502.');
  });
});

describe('doorSnippet', () => {
  const origin = 'https://gw.example';
  it('curl to the door with the token from the environment, and the SDK at the door’s base URL', () => {
    const s = doorSnippet(doorByID('anthropic'), origin, base, 'claude-sonnet-4-5', true);
    expect(s.curl).toContain('curl -N https://gw.example/v1/acme/prod/anthropic/v1/messages');
    expect(s.curl).toContain('-H "Authorization: Bearer $SLUICE_TOKEN"');
    expect(s.curl).toContain('-H "anthropic-version: 2023-06-01"');
    expect(s.curl).toContain(`-d '{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Hello"}],"stream":true}'`);
    expect(s.sdkName).toBe('Python, anthropic');
    expect(s.sdk).toContain('Anthropic(base_url="https://gw.example/v1/acme/prod/anthropic"');
    expect(s.sdk).toContain('stream=True');

    const r = doorSnippet(doorByID('responses'), origin, base, 'smart', false);
    expect(r.curl).toMatch(/^curl https:\/\/gw\.example\/v1\/acme\/prod\/compat\/responses /);
    expect(r.sdk).toContain('OpenAI(base_url="https://gw.example/v1/acme/prod/compat"');
    expect(r.sdk).toContain('client.responses.create(model="smart", input="Hello")');
    expect(doorSnippet(doorByID('chat'), origin, base, 'smart', false).sdk).toContain('client.chat.completions.create(model="smart"');
    expect(doorSnippet(doorByID('openai'), origin, base, 'gpt-4o-mini', false).sdk).toContain('base_url="https://gw.example/v1/acme/prod/openai"');
  });
});
