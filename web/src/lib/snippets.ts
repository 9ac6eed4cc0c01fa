// The ways a client reaches a gateway, written out for a new token: the
// gateway's full base URL and ready-to-run snippets for curl, the OpenAI
// SDKs, the Anthropic SDK and Claude Code. They use the token itself, and
// are shown only in the one view where the token appears (its creation).
// The door paths are those of docs/inference.md: the OpenAI and Anthropic
// SDKs and Claude Code are all pointed at {base}/compat.

/** GatewayRef is what the base URL of a gateway is made from. */
export interface GatewayRef {
  tenantId: string;
  slug: string;
  /** baseUrl is the server's answer: --public-url + /v1/{tenant}/{slug}, or the path alone. */
  baseUrl?: string | null;
}

/**
 * gatewayBaseURL is the full base URL of a gateway's inference API: the
 * server's when it knows its public URL, else the path under the origin
 * the dashboard is served from (one process serves both).
 */
export function gatewayBaseURL(g: GatewayRef, origin: string): string {
  const b = g.baseUrl || `/v1/${g.tenantId}/${g.slug}`;
  if (/^https?:\/\//.test(b)) return b.replace(/\/+$/, '');
  return origin.replace(/\/+$/, '') + b;
}

/** The door every snippet goes through: the translating /compat door, which reaches any provider. */
export const COMPAT = 'compat';

export interface TokenSnippet {
  id: 'curl' | 'openai-js' | 'openai-python' | 'anthropic-js' | 'anthropic-python' | 'claude-code';
  label: string;
  code: string;
}

/**
 * tokenSnippets writes the snippets for a token on a gateway whose base URL
 * is base; model is what the chat snippets ask for (a route name or
 * provider/model), claudeModel what the Anthropic SDK asks for.
 */
export function tokenSnippets(base: string, token: string, model: string, claudeModel = model): TokenSnippet[] {
  const compat = `${base}/${COMPAT}`;
  const q = JSON.stringify;
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] });
  return [
    {
      id: 'curl',
      label: 'curl',
      code: [
        `curl ${compat}/chat/completions \\`,
        `  -H "Authorization: Bearer ${token}" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d '${body}'`,
      ].join('\n'),
    },
    {
      id: 'openai-js',
      label: 'OpenAI SDK (JavaScript)',
      code: [
        `import OpenAI from "openai";`,
        ``,
        `const client = new OpenAI({ baseURL: ${q(compat)}, apiKey: ${q(token)} });`,
        `const r = await client.chat.completions.create({ model: ${q(model)}, messages: [{ role: "user", content: "Hello" }] });`,
        `console.log(r.choices[0].message.content);`,
      ].join('\n'),
    },
    {
      id: 'openai-python',
      label: 'OpenAI SDK (Python)',
      code: [
        `from openai import OpenAI`,
        ``,
        `client = OpenAI(base_url=${q(compat)}, api_key=${q(token)})`,
        `r = client.chat.completions.create(model=${q(model)}, messages=[{"role": "user", "content": "Hello"}])`,
        `print(r.choices[0].message.content)`,
      ].join('\n'),
    },
    {
      id: 'anthropic-js',
      label: 'Anthropic SDK (JavaScript)',
      code: [
        `import Anthropic from "@anthropic-ai/sdk";`,
        ``,
        `const client = new Anthropic({ baseURL: ${q(compat)}, apiKey: ${q(token)} });`,
        `const r = await client.messages.create({ model: ${q(claudeModel)}, max_tokens: 1024, messages: [{ role: "user", content: "Hello" }] });`,
        `console.log(r.content[0].text);`,
      ].join('\n'),
    },
    {
      id: 'anthropic-python',
      label: 'Anthropic SDK (Python)',
      code: [
        `from anthropic import Anthropic`,
        ``,
        `client = Anthropic(base_url=${q(compat)}, api_key=${q(token)})`,
        `r = client.messages.create(model=${q(claudeModel)}, max_tokens=1024, messages=[{"role": "user", "content": "Hello"}])`,
        `print(r.content[0].text)`,
      ].join('\n'),
    },
    {
      id: 'claude-code',
      label: 'Claude Code',
      code: [`export ANTHROPIC_BASE_URL=${compat}`, `export ANTHROPIC_AUTH_TOKEN=${token}`, `claude`].join('\n'),
    },
  ];
}

/**
 * snippetModel is the model the snippets ask for on a gateway: its first
 * route (which the gateway serves by name), else the first model a key
 * lists as provider/model, else a common one.
 */
export function snippetModel(routes: { name: string }[], keys: { provider: string; models: string[]; disabled?: boolean }[]): string {
  if (routes.length) return routes[0].name;
  const k = keys.find((k) => !k.disabled && k.models.length);
  if (k) return `${k.provider}/${k.models[0]}`;
  return 'openai/gpt-4o-mini';
}
