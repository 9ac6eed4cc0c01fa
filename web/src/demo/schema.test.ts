import {
  buildSchema,
  execute,
  getNamedType,
  isObjectType,
  parse,
  validate,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type OperationDefinitionNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import schemaText from '../../../schema.graphql?raw';
import { makeClient } from '../api/client';
import { demoSession } from '../api/session';
import { Q, operationName } from '../api/queries';
import { tokensQuery } from '../pages/logs/FilterBar';
import { demoOperationNames } from './exchange';
import { DEMO_VARS as VARS } from './vars';

// The demo's sample data has the shapes the real API returns: every query the
// demo answers is validated against schema.graphql, and its answer is run
// through the schema as the root value. A field the schema does not have, a
// missing non-null field, a wrong enum value or a number where the schema has
// a string makes the result differ from the answer (or fail), and a field the
// schema does not have is named, so the demo's pages read what they would
// read from a server.

const schema = buildSchema(schemaText);

/** byResponseKey reads each field of the answer by the key it is answered under (alias or name). */
const byResponseKey: GraphQLFieldResolver<Record<string, unknown>, unknown> = (source, _args, _ctx, info) => source?.[info.path.key as string];

const demoQueries = Object.values(Q).filter((doc) => demoOperationNames.includes(operationName(doc)!));


const client = makeClient(demoSession(), () => {
  throw new Error('no 401 in the demo');
});

async function answer(doc: string, vars: Record<string, unknown>) {
  const res = await client.query(doc, vars).toPromise();
  expect(res.error, operationName(doc)!).toBeUndefined();
  return res.data as Record<string, unknown>;
}

/**
 * differences lists where the answer differs from what the schema made of it:
 * a field the query asks for that the answer leaves out (the server sends it,
 * as null if need be) or a value the schema coerced (a number for a string).
 */
function differences(result: unknown, answer: unknown, path: string): string[] {
  if (result === null || typeof result !== 'object') {
    if (answer === undefined) return [`${path}: missing (the API answers ${JSON.stringify(result)})`];
    return Object.is(result, answer) ? [] : [`${path}: ${JSON.stringify(answer)} where the schema gives ${JSON.stringify(result)}`];
  }
  if (Array.isArray(result)) {
    if (!Array.isArray(answer)) return [`${path}: not a list`];
    return result.flatMap((r, i) => differences(r, answer[i], `${path}.${i}`));
  }
  if (answer === null || typeof answer !== 'object') return [`${path}: not an object`];
  return Object.entries(result).flatMap(([k, v]) => differences(v, (answer as Record<string, unknown>)[k], `${path}.${k}`));
}

/** unknownFields lists the fields of value that its schema type does not have. */
function unknownFields(type: GraphQLOutputType, value: unknown, path: string): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownFields(type, v, `${path}.${i}`));
  const named = getNamedType(type);
  if (!isObjectType(named)) return [];
  const fields = named.getFields();
  return Object.entries(value).flatMap(([k, v]) => (fields[k] ? unknownFields(fields[k].type, v, `${path}.${k}`) : k === '__typename' ? [] : [`${path}.${k}: ${named.name} has no field ${k}`]));
}

/** conforms checks one query and its demo answer against the schema. */
function conforms(doc: string, vars: Record<string, unknown>, data: Record<string, unknown>) {
  const name = operationName(doc)!;
  const document = parse(doc);
  expect(validate(schema, document).map((e) => e.message), `${name} is valid against schema.graphql`).toEqual([]);
  const res = execute({ schema, document, rootValue: data, variableValues: vars, fieldResolver: byResponseKey }) as { data?: unknown; errors?: readonly { message: string; path?: readonly (string | number)[] }[] };
  expect(res.errors?.map((e) => `${e.path?.join('.')}: ${e.message}`), `${name}: the answer fits the schema`).toBeUndefined();
  expect(differences(res.data, data, name), `${name}: the answer is what the API would send`).toEqual([]);
  // The fixtures are whole objects shared by several queries: beyond what a
  // query asks, each field they carry must exist in the schema.
  const op = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!;
  const root = schema.getQueryType()!.getFields();
  const extra = op.selectionSet.selections.flatMap((sel) => {
    if (sel.kind !== 'Field') return [];
    const key = sel.alias?.value ?? sel.name.value;
    return unknownFields(root[sel.name.value].type, data[key], `${name}.${key}`);
  });
  expect(extra, `${name}: every field of the answer is in the schema`).toEqual([]);
}

describe('the demo fixtures', () => {
  // The log explorer's token picker builds its query at run time.
  const logTokens = tokensQuery(['gw_demo_prod', 'gw_demo_staging'], 'usr_demo_dana');

  it('covers the demo queries', () => {
    expect([...demoQueries.map((d) => operationName(d)), operationName(logTokens.query)].sort()).toEqual([...demoOperationNames].sort());
  });

  it('answers LogTokens (the token picker) in the shape of schema.graphql', async () => {
    conforms(logTokens.query, logTokens.variables, await answer(logTokens.query, logTokens.variables));
  });

  for (const doc of demoQueries) {
    const name = operationName(doc)!;
    if (name === 'LogDetail' || name === 'TraceDetail') continue;
    it(`answers ${name} in the shape of schema.graphql`, async () => {
      const vars = VARS[name] ?? {};
      conforms(doc, vars, await answer(doc, vars));
    });
  }

  it('answers a log and its trace in the shape of schema.graphql', async () => {
    const logs = (await answer(Q.logs, {})) as { logs: { data: { id: string }[] } };
    for (const { id } of logs.logs.data.slice(0, 5)) {
      const log = await answer(Q.log, { id });
      conforms(Q.log, { id }, log);
      const traceId = (log.log as { traceId: string }).traceId;
      conforms(Q.trace, { id: traceId }, await answer(Q.trace, { id: traceId }));
    }
  });
});
