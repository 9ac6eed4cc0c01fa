// How to reach a gateway with a new token: its full base URL and ready
// snippets (curl, the OpenAI SDKs, the Anthropic SDKs, Claude Code), each
// with a copy button. Shown with the new token's secret only, and gone
// with it.

import type { Gateway } from '../../api/types';
import { CopyButton } from '../../components/ui';
import { gatewayBaseURL, tokenSnippets } from '../../lib/snippets';

export function Connect({ gateway: g, token, model }: { gateway: Gateway; token: string; model: string }) {
  const base = gatewayBaseURL(g, window.location.origin);
  const claude = model.includes('/') || !g.routes.length ? 'claude-sonnet-4-5' : model;
  return (
    <div className="connect" role="region" aria-label="Connect with the new token">
      <div className="base-url">
        <strong>Base URL</strong>
        <code data-testid="connect-base-url">{base}</code>
        <CopyButton text={base} label="Copy base URL" />
      </div>
      <p className="hint">
        OpenAI SDKs, Anthropic SDKs and Claude Code use <code>{base}/compat</code>: it reaches every provider of the gateway. These snippets hold the new token: they are shown this once with it.
      </p>
      {tokenSnippets(base, token, model, claude).map((s) => (
        <div key={s.id} data-snippet={s.id}>
          <div className="snippet-head">
            <h3>{s.label}</h3>
            <CopyButton text={s.code} label={`Copy ${s.label}`} />
          </div>
          <pre>{s.code}</pre>
        </div>
      ))}
    </div>
  );
}
