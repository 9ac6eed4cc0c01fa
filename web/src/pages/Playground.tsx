// Playground: chat with a model the caller can reach, through the gateway
// itself (a 15-minute playground token) and the front door of one's choice
// (lib/doors: Chat Completions, Anthropic Messages, OpenAI Responses, and the
// native doors of the model's provider), streamed or not. Each answer shows
// its door, tokens, cost, latency, request id and a link to its log and trace.

import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useClient } from 'urql';
import { useApp } from '../app/context';
import { problemOf } from '../api/errors';
import { M, Q } from '../api/queries';
import type { Connection, ModelPrice, PlaygroundModel, PlaygroundToken } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { Empty, Field, PageHeader } from '../components/ui';
import { chatCost, sendChat, type ChatMessage, type ChatResult } from '../lib/chat';
import { doorByID, doorModel, doorSnippet, doorsFor, doorURL, type Door } from '../lib/doors';
import { formatDuration, formatInt, formatUSD } from '../lib/format';
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
  const list = models.data?.playgroundSearch?.data ?? [];
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
            {(c) =>
              c.data.length === 0 ? (
                <Empty>
                  {q ? 'No reachable model matches.' : 'No model is reachable yet: a gateway needs a provider key (with models) or a route, and Members need the gateway assigned.'}
                </Empty>
              ) : (
                <ul className="model-list" aria-label="Reachable models">
                  {c.data.map((m) => (
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
              )
            }
          </QueryView>
        </section>
        {model ? <Chat key={keyOf(model)} model={model} canSeeLogs={allowed(role, 'log.read')} canSeePrices={allowed(role, 'model_price.list')} /> : null}
      </div>
    </>
  );
}

function Chat({ model, canSeeLogs, canSeePrices }: { model: PlaygroundModel; canSeeLogs: boolean; canSeePrices: boolean }) {
  const client = useClient();
  const token = useRef<PlaygroundToken | null>(null);
  const [system, setSystem] = useState('');
  const [input, setInput] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const doors = doorsFor(model);
  const [doorID, setDoorID] = useState(doors[0].id);
  const door = doors.find((d) => d.id === doorID) ?? doorByID('chat');
  const [stream, setStream] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const prices = useGQL<{ modelPrices: Connection<ModelPrice> }>(Q.prices, { provider: model.provider }, !canSeePrices);
  const price = useMemo(() => prices.data?.modelPrices?.data.find((p) => p.model === model.model) ?? null, [prices.data, model.model]);
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
    if (!text || busy) return;
    setError(null);
    const tok = await getToken();
    if (!tok) return;
    const history: ChatMessage[] = [];
    if (system.trim()) history.push({ role: 'system', content: system.trim() });
    for (const t of turns) {
      if (t.result && !t.result.error) history.push({ role: 'user', content: t.user }, { role: 'assistant', content: t.answer });
    }
    history.push({ role: 'user', content: text });
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
        signal: ctl.signal,
        onDelta: (d) => patch((t) => ({ ...t, answer: t.answer + d })),
      });
      patch((t) => ({ ...t, answer: result.content, result, pending: false }));
    } catch (err) {
      const aborted = ctl.signal.aborted;
      patch((t) => ({ ...t, pending: false, result: { content: t.answer, status: 0, requestId: null, latencyMs: 0, error: aborted ? 'Stopped.' : 'The request failed: ' + (err instanceof Error ? err.message : String(err)) } }));
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
        <label className="check">
          <input type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} disabled={busy} /> Stream
        </label>
      </div>
      <ViewCode door={door} model={model} stream={stream} />
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
              {t.result && <TurnFacts turn={t} r={t.result} cost={chatCost(t.result.usage, price)} priced={!!price} canSeeLogs={canSeeLogs} />}
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

/** ViewCode shows the request of the chosen door as curl and SDK code, with the token read from $SLUICE_TOKEN. */
function ViewCode({ door, model, stream }: { door: Door; model: PlaygroundModel; stream: boolean }) {
  const s = doorSnippet(door, window.location.origin, basePathOf(model), doorModel(door, model), stream);
  return (
    <details className="view-code">
      <summary>View code</summary>
      <h3>curl</h3>
      <pre data-testid="code-curl">{s.curl}</pre>
      <h3>{s.sdkName}</h3>
      <pre data-testid="code-sdk">{s.sdk}</pre>
    </details>
  );
}

function TurnFacts({ turn, r, cost, priced, canSeeLogs }: { turn: Turn; r: ChatResult; cost: number | null; priced: boolean; canSeeLogs: boolean }) {
  const u = r.usage;
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
      <span>{cost != null ? formatUSD(cost) : priced ? '—' : 'unpriced'}</span>
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
