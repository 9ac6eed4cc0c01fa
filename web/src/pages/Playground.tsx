// Playground: chat with a model the caller can reach, through the gateway
// itself (a 15-minute playground token) and the front door of one's choice
// (lib/doors: Chat Completions, Anthropic Messages, OpenAI Responses, and the
// native doors of the model's provider), streamed or not, with a temperature
// and a cap on the answer's tokens. Each answer shows its door, tokens, the
// target that served it (after fallbacks) and its cost as logged — read
// back through playgroundRequest, which every playground role may use for its
// own requests, so a Member sees the cost of what it used without reading
// prices or logs — latency, request id and a link to its log and trace.
// Embedding models are not offered: the Playground chats.

import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useClient } from 'urql';
import { useApp } from '../app/context';
import { problemOf } from '../api/errors';
import { M, Q } from '../api/queries';
import type { Connection, PlaygroundModel, PlaygroundRequest, PlaygroundToken } from '../api/types';
import { Cost } from '../components/Cost';
import { QueryView, useGQL } from '../components/data';
import { Empty, Field, PageHeader } from '../components/ui';
import { sendChat, type ChatMessage, type ChatResult } from '../lib/chat';
import { requestCode } from '../lib/code';
import { doorByID, doorModel, doorsFor, doorURL, type Door, type SamplingOptions } from '../lib/doors';
import { formatDuration, formatInt } from '../lib/format';
import { allowed } from '../lib/policy';
import { Link } from '../lib/router';

interface Turn {
  user: string;
  answer: string;
  /** door and stream are how the turn was sent. */
  door: Door;
  stream: boolean;
  result?: ChatResult;
  pending: boolean;
}

const modelName = (m: PlaygroundModel) => (m.route ? m.route : `${m.provider}/${m.model}`);
const keyOf = (m: PlaygroundModel) => `${m.gatewayId}|${m.provider}|${m.model}|${m.route}`;

export function Playground() {
  const { role } = useApp();
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const models = useGQL<{ playgroundSearch: Connection<PlaygroundModel> }>(Q.playgroundSearch, { q: q || null });
  const [picked, setPicked] = useState<string>('');
  const list = (models.data?.playgroundSearch?.data ?? []).filter(isChatModel);
  const model = list.find((m) => keyOf(m) === picked) ?? list[0];

  useEffect(() => {
    const t = setTimeout(() => setQ(search.trim()), 250);
    return () => clearTimeout(t);
  }, [search]);

  return (
    <>
      <PageHeader title="Playground" subtitle="Chat through a gateway and the door of your choice, as your applications do. Requests are logged and cost money like any other." />
      <div className="playground">
        <section className="panel models" aria-label="Models">
          <div className="field">
            <label htmlFor="pg-search">Find a model</label>
            <input id="pg-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="gpt-4o, anthropic, prod…" />
          </div>
          <QueryView<Connection<PlaygroundModel>> q={models} field="playgroundSearch" what="the playground">
            {(c) => {
              const chat = c.data.filter(isChatModel);
              const hidden = c.data.length - chat.length;
              const note = hidden > 0 && (
                <p className="hint" data-testid="embeddings-hidden">
                  {hidden} embedding model{hidden === 1 ? '' : 's'} not shown: the Playground chats.
                </p>
              );
              return chat.length === 0 ? (
                <>
                  <Empty>
                    {q ? 'No reachable chat model matches.' : 'No chat model is reachable yet: a gateway needs a provider key (with models) or a route, and Members need the gateway assigned.'}
                  </Empty>
                  {note}
                </>
              ) : (
                <>
                <ul className="model-list" aria-label="Reachable models">
                  {chat.map((m) => (
                    <li key={keyOf(m)}>
                      <button type="button" aria-pressed={!!model && keyOf(m) === keyOf(model)} onClick={() => setPicked(keyOf(m))}>
                        <strong>{modelName(m)}</strong>
                        <span className="muted">
                          {m.tenantId}/{m.gatewaySlug}
                          {m.route ? ` · route → ${m.provider}/${m.model}` : ''}
                        </span>
                      </button>
                    </li>
                  ))}
                </ul>
                {note}
                </>
              );
            }}
          </QueryView>
        </section>
        {model ? <Chat key={keyOf(model)} model={model} canSeeLogs={allowed(role, 'log.read')} /> : null}
      </div>
    </>
  );
}

/** isChatModel: the Playground offers every model but embedding models. */
export const isChatModel = (m: PlaygroundModel) => m.kind !== 'embedding';

/** sampling reads the options form: empty fields are left to the model. */
export function sampling(temperature: string, maxTokens: string): SamplingOptions {
  const o: SamplingOptions = {};
  if (temperature.trim() !== '' && Number.isFinite(Number(temperature))) o.temperature = Number(temperature);
  if (/^\d+$/.test(maxTokens.trim()) && Number(maxTokens) > 0) o.maxTokens = Number(maxTokens);
  return o;
}

function Chat({ model, canSeeLogs }: { model: PlaygroundModel; canSeeLogs: boolean }) {
  const client = useClient();
  const token = useRef<PlaygroundToken | null>(null);
  const [system, setSystem] = useState('');
  const [input, setInput] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const doors = doorsFor(model);
  const [doorID, setDoorID] = useState(doors[0].id);
  const door = doors.find((d) => d.id === doorID) ?? doorByID('chat');
  const [stream, setStream] = useState(true);
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const options = useMemo(() => sampling(temperature, maxTokens), [temperature, maxTokens]);
  const tempErr = temperature.trim() !== '' && !(Number(temperature) >= 0 && Number(temperature) <= 2) ? 'A temperature from 0 to 2.' : null;
  const maxErr = maxTokens.trim() !== '' && !/^[1-9]\d*$/.test(maxTokens.trim()) ? 'A whole number of tokens.' : null;
  const [error, setError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const busy = turns.some((t) => t.pending);

  const getToken = async (): Promise<PlaygroundToken | null> => {
    const t = token.current;
    if (t && new Date(t.expiresAt).getTime() - Date.now() > 30_000) return t;
    const res = await client.mutation(M.createPlaygroundToken, { gatewayId: model.gatewayId }).toPromise();
    const p = problemOf(res.error, 'createPlaygroundToken');
    if (p) {
      setError(p.message);
      return null;
    }
    token.current = res.data?.createPlaygroundToken ?? null;
    return token.current;
  };

  const send = async (e: FormEvent) => {
    e.preventDefault();
    const text = input.trim();
    if (!text || busy || tempErr || maxErr) return;
    setError(null);
    const tok = await getToken();
    if (!tok) return;
    const history = conversation(system, turns, text);
    const idx = turns.length;
    setTurns((ts) => [...ts, { user: text, answer: '', door, stream, pending: true }]);
    setInput('');
    const ctl = new AbortController();
    abort.current = ctl;
    const patch = (f: (t: Turn) => Turn) => setTurns((ts) => ts.map((t, i) => (i === idx ? f(t) : t)));
    try {
      const result = await sendChat({
        door,
        url: doorURL(tok.basePath, door),
        token: tok.token,
        model: doorModel(door, model),
        messages: history,
        stream,
        options,
        signal: ctl.signal,
        onDelta: (d) => patch((t) => ({ ...t, answer: t.answer + d })),
      });
      patch((t) => ({ ...t, answer: result.content, result, pending: false }));
    } catch (err) {
      const aborted = ctl.signal.aborted;
      patch((t) => ({ ...t, pending: false, result: { content: t.answer, status: 0, requestId: null, served: null, latencyMs: 0, error: aborted ? 'Stopped.' : 'The request failed: ' + (err instanceof Error ? err.message : String(err)) } }));
    } finally {
      abort.current = null;
    }
  };

  return (
    <section className="panel chat" aria-label="Chat">
      <div className="panel-head">
        <h2>
          {modelName(model)} <span className="muted">on {model.tenantId}/{model.gatewaySlug}</span>
        </h2>
        {turns.length > 0 && (
          <button type="button" className="small" onClick={() => setTurns([])} disabled={busy}>
            New conversation
          </button>
        )}
      </div>
      <div className="door-bar">
        <Field label="Door" hint={<code data-testid="door-path">POST {doorURL(basePathOf(model), door)}</code>}>
          <select value={door.id} onChange={(e) => setDoorID(e.target.value)} disabled={busy}>
            {doors.map((d) => (
              <option key={d.id} value={d.id}>
                {d.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Temperature" hint="0 to 2; empty: the model's default." error={tempErr}>
          <input inputMode="decimal" value={temperature} onChange={(e) => setTemperature(e.target.value)} disabled={busy} placeholder="default" />
        </Field>
        <Field label="Max tokens" hint="Caps the answer; empty: no cap." error={maxErr}>
          <input inputMode="numeric" value={maxTokens} onChange={(e) => setMaxTokens(e.target.value)} disabled={busy} placeholder="none" />
        </Field>
        <label className="check">
          <input type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} disabled={busy} /> Stream
        </label>
      </div>
      <ViewCode door={door} model={model} stream={stream} options={options} messages={conversation(system, turns, input.trim() || 'Hello')} />
      <Field label="System prompt" hint="Optional instructions sent before the conversation (Messages: system; Responses: instructions).">
        <textarea rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
      </Field>
      <div className="transcript" aria-live="polite">
        {turns.length === 0 && <Empty>Ask something to start.</Empty>}
        {turns.map((t, i) => (
          <div key={i} className="turn">
            <div className="msg user">
              <span className="who">You</span>
              <p>{t.user}</p>
            </div>
            <div className="msg assistant" data-testid="answer">
              <span className="who">
                {modelName(model)} <span className="muted">via {t.door.label}</span>
              </span>
              <p className={t.pending && !t.answer ? 'muted' : undefined}>{t.answer || (t.pending ? 'Waiting for the first token…' : '')}</p>
              {t.result && <TurnFacts turn={t} r={t.result} canSeeLogs={canSeeLogs} />}
            </div>
          </div>
        ))}
      </div>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <form className="composer" onSubmit={send} aria-label="Send a message">
        <Field label="Message">
          <textarea
            rows={3}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) send(e);
            }}
            placeholder="Ctrl+Enter sends"
          />
        </Field>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy || !input.trim()}>
            Send
          </button>
          {busy && (
            <button type="button" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

/** basePathOf is the /compat base of a model's gateway, as a playground token names it. */
const basePathOf = (m: PlaygroundModel) => `/v1/${m.tenantId}/${m.gatewaySlug}/compat`;

/** conversation is what a turn sends: the system prompt, the answered turns, and the new message. */
function conversation(system: string, turns: Turn[], text: string): ChatMessage[] {
  const history: ChatMessage[] = [];
  if (system.trim()) history.push({ role: 'system', content: system.trim() });
  for (const t of turns) {
    if (t.result && !t.result.error) history.push({ role: 'user', content: t.user }, { role: 'assistant', content: t.answer });
  }
  history.push({ role: 'user', content: text });
  return history;
}

/** ViewCode shows the request about to be sent as curl and SDK code (Python, JavaScript), with the token read from SLUICE_TOKEN: never the real one. */
function ViewCode({ door, model, stream, options, messages }: { door: Door; model: PlaygroundModel; stream: boolean; options: SamplingOptions; messages: ChatMessage[] }) {
  const [open, setOpen] = useState(false);
  const c = open ? requestCode(door, window.location.origin, basePathOf(model), doorModel(door, model), messages, stream, options) : null;
  const sdk = c?.sdk === 'anthropic' ? 'Anthropic SDK' : 'OpenAI SDK';
  return (
    <details className="view-code" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>View code</summary>
      {c && (
        <>
          <p className="hint">The request the next message sends. Set SLUICE_TOKEN to one of your API tokens: the Playground's own token is not shown.</p>
          <h3>curl</h3>
          <pre data-testid="code-curl">{c.curl}</pre>
          <h3>Python, {sdk}</h3>
          <pre data-testid="code-sdk">{c.python}</pre>
          <h3>JavaScript, {sdk}</h3>
          <pre data-testid="code-js">{c.js}</pre>
        </>
      )}
    </details>
  );
}

/** useServedCost reads the served target and cost of a request from its log (playgroundRequest), retrying while it is not logged yet. */
function useServedCost(requestId: string | null): { cost: PlaygroundRequest | null; gaveUp: boolean } {
  const client = useClient();
  const [cost, setCost] = useState<PlaygroundRequest | null>(null);
  const [gaveUp, setGaveUp] = useState(false);
  useEffect(() => {
    if (!requestId) return;
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const attempt = async (left: number) => {
      const res = await client.query(Q.playgroundRequest, { id: requestId }, { requestPolicy: 'network-only' }).toPromise();
      if (stop) return;
      const got = (res.data as { playgroundRequest?: PlaygroundRequest | null } | undefined)?.playgroundRequest;
      if (got) setCost(got);
      else if (left > 0) timer = setTimeout(() => attempt(left - 1), 750);
      else setGaveUp(true);
    };
    attempt(20);
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [client, requestId]);
  return { cost, gaveUp };
}

function TurnFacts({ turn, r, canSeeLogs }: { turn: Turn; r: ChatResult; canSeeLogs: boolean }) {
  const u = r.usage;
  const { cost, gaveUp } = useServedCost(r.requestId);
  const served = cost && cost.model ? `${cost.provider}/${cost.model}` : r.served;
  return (
    <div className="turn-facts" data-testid="turn-facts">
      {r.error && (
        <span className="form-error" role="alert">
          {r.error}
        </span>
      )}
      <span data-testid="turn-door">
        <code>{turn.door.api}</code> {turn.stream ? 'streamed' : 'not streamed'}
      </span>
      {u && (
        <span>
          {formatInt(u.prompt_tokens)} in · {formatInt(u.completion_tokens)} out tokens
          {u.cache_read_tokens ? ` · ${formatInt(u.cache_read_tokens)} cache read` : ''}
          {u.cache_write_tokens ? ` · ${formatInt(u.cache_write_tokens)} cache write` : ''}
          {u.reasoning_tokens ? ` · ${formatInt(u.reasoning_tokens)} reasoning` : ''}
        </span>
      )}
      {served && (
        <span data-testid="turn-served">
          served by <code>{served}</code>
        </span>
      )}
      <span data-testid="turn-cost">{cost ? <Cost usd={cost.costUsd} unpriced={cost.priced ? 0 : 1} /> : gaveUp ? 'cost not logged yet' : r.requestId ? 'pricing…' : '—'}</span>
      {r.ttftMs !== undefined && <span>first token {formatDuration(r.ttftMs)}</span>}
      <span>total {formatDuration(r.latencyMs)}</span>
      {r.cache && r.cache !== 'MISS' && <span>cache {r.cache}</span>}
      {r.requestId && (
        <span>
          request <code data-testid="request-id">{r.requestId}</code>
        </span>
      )}
      {r.requestId && canSeeLogs && (
        <Link to={`/ui/logs/${r.requestId}`} data-testid="trace-link">
          View log and trace
        </Link>
      )}
    </div>
  );
}
