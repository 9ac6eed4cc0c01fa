// "View code" of the Playground: the request the Playground is about to send
// (door, model, conversation, sampling options, stream), written as curl and
// as SDK code in Python and JavaScript — the OpenAI SDK for the Chat
// Completions and Responses doors, the Anthropic SDK for the Messages doors.
// The token is always the placeholder SLUICE_TOKEN read from the
// environment: these functions are never given the real one.

import { doorRequest, doorURL, gatewayBase, type ChatMessage, type Door, type SamplingOptions } from './doors';

export interface RequestCode {
  curl: string;
  python: string;
  js: string;
  /** sdk names the SDK of the Python and JavaScript code: openai or anthropic. */
  sdk: 'openai' | 'anthropic';
}

/** pyValue writes a JSON value as a Python literal. */
export function pyValue(v: unknown, indent = ''): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number' || typeof v === 'string') return JSON.stringify(v);
  const inner = indent + '    ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[\n' + v.map((x) => inner + pyValue(x, inner)).join(',\n') + ',\n' + indent + ']';
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return '{' + entries.map(([k, x]) => `${JSON.stringify(k)}: ${pyValue(x, indent)}`).join(', ') + '}';
}

/** requestCode writes the request as curl, Python and JavaScript. */
export function requestCode(d: Door, origin: string, basePath: string, model: string, messages: ChatMessage[], stream: boolean, opts: SamplingOptions = {}): RequestCode {
  const req = doorRequest(d, model, messages, stream, opts);
  const hdrs = ['Authorization: Bearer $SLUICE_TOKEN', ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`)];
  const body = JSON.stringify(req.body).replace(/'/g, `'\\''`);
  const curl = [`curl ${stream ? '-N ' : ''}${origin}${doorURL(basePath, d)} \\`, ...hdrs.map((h) => `  -H "${h}" \\`), `  -d '${body}'`].join('\n');

  const base = `${origin}${gatewayBase(basePath)}/${d.sdkBase}`;
  const sdk = d.api === 'messages' ? 'anthropic' : 'openai';
  const method = d.api === 'chat' ? 'chat.completions.create' : d.api === 'messages' ? 'messages.create' : 'responses.create';
  // The SDKs send the headers themselves (and stream_options only matters to the usage of a stream).
  const args = { ...req.body };
  const pyArgs = Object.entries(args)
    .map(([k, v]) => `    ${k}=${pyValue(v, '    ')},`)
    .join('\n');
  const python = [
    'import os',
    sdk === 'openai' ? 'from openai import OpenAI' : 'from anthropic import Anthropic',
    '',
    `client = ${sdk === 'openai' ? 'OpenAI' : 'Anthropic'}(base_url=${JSON.stringify(base)}, api_key=os.environ["SLUICE_TOKEN"])`,
    `r = client.${method}(`,
    pyArgs,
    ')',
    stream ? 'for event in r:\n    print(event)' : 'print(r)',
  ].join('\n');
  const js = [
    sdk === 'openai' ? "import OpenAI from 'openai';" : "import Anthropic from '@anthropic-ai/sdk';",
    '',
    `const client = new ${sdk === 'openai' ? 'OpenAI' : 'Anthropic'}({ baseURL: ${JSON.stringify(base)}, apiKey: process.env.SLUICE_TOKEN });`,
    `const r = await client.${method}(${JSON.stringify(args, null, 2)});`,
    stream ? 'for await (const event of r) console.log(event);' : 'console.log(r);',
  ].join('\n');
  return { curl, python, js, sdk };
}
