// A gateway's content rules: keyword, regex or PII matchers that block,
// redact or flag requests and responses.

import { useState, type FormEvent } from 'react';
import { M, Q } from '../../api/queries';
import type { Connection, Gateway, Rule } from '../../api/types';
import { QueryView, useAction, useGQL } from '../../components/data';
import { ActionsHeader, Badge, Button, Check, ConfirmButton, Empty, Field, InlineProblem, Submit } from '../../components/ui';
import * as v from '../../lib/validate';

export const PII_KINDS = ['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ipv4', 'secret_key'];

interface Draft {
  name: string;
  enabled: boolean;
  direction: string;
  kind: string;
  patterns: string;
  pii: string[];
  action: string;
  caseSensitive: boolean;
}

const blank: Draft = { name: '', enabled: true, direction: 'both', kind: 'keyword', patterns: '', pii: [], action: 'block', caseSensitive: false };

/** ruleErrors validates a rule draft. */
export function ruleErrors(d: Draft): { name: string | null; patterns: string | null; pii: string | null } {
  return {
    name: !d.name.trim() ? 'A rule needs a name.' : d.name.length > 200 ? 'At most 200 characters.' : null,
    patterns: d.kind === 'pii' ? null : v.patterns(v.lines(d.patterns), d.kind),
    pii: d.kind === 'pii' && d.pii.length === 0 ? 'Choose at least one kind of personal data.' : null,
  };
}

export function Rules({ gateway: g }: { gateway: Gateway }) {
  const q = useGQL<{ rules: Connection<Rule> }>(Q.gatewayRules, { id: g.id });
  const [editing, setEditing] = useState<string | null>(null);
  const act = useAction();
  return (
    <>
      <section className="panel">
        <h2>Content rules</h2>
        <p className="hint">Patterns are data, matched with RE2. A blocked request never reaches the provider; redacted text becomes [REDACTED:kind] before forwarding and logging.</p>
        <QueryView<Connection<Rule>> q={q} field="rules" what="the content rules">
          {(c) =>
            c.data.length === 0 ? (
              <Empty>No content rules.</Empty>
            ) : (
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Matches</th>
                    <th scope="col">Direction</th>
                    <th scope="col">Action</th>
                    <th scope="col">Enabled</th>
                    <ActionsHeader />
                  </tr>
                </thead>
                <tbody>
                  {c.data.map((r) =>
                    editing === r.id ? (
                      <tr key={r.id}>
                        <td colSpan={6}>
                          <RuleForm
                            gatewayId={g.id}
                            rule={r}
                            onDone={() => {
                              setEditing(null);
                              q.refetch();
                            }}
                            onCancel={() => setEditing(null)}
                          />
                        </td>
                      </tr>
                    ) : (
                      <tr key={r.id}>
                        <td>{r.name}</td>
                        <td className="wrap">
                          {r.kind === 'pii' ? `PII: ${r.pii.join(', ')}` : `${r.kind}: ${r.patterns.join(' · ')}`}
                          {r.caseSensitive ? ' (case-sensitive)' : ''}
                        </td>
                        <td>{r.direction}</td>
                        <td>
                          <Badge tone={r.action === 'block' ? 'bad' : r.action === 'redact' ? 'warn' : 'neutral'}>{r.action}</Badge>
                        </td>
                        <td>
                          <Check
                            label={<span className="sr-only">Rule {r.name} enabled</span>}
                            checked={r.enabled}
                            onChange={async (b) => {
                              if (await act.run(M.updateRule, { gatewayId: g.id, input: { id: r.id, enabled: b } }, 'updateRule')) q.refetch();
                            }}
                          />
                        </td>
                        <td className="row-actions">
                          <Button className="small" onClick={() => setEditing(r.id)}>
                            Edit
                          </Button>
                          <ConfirmButton
                            label="Delete"
                            confirm={`Delete rule ${r.name}`}
                            onConfirm={async () => {
                              if (await act.run(M.deleteRule, { gatewayId: g.id, id: r.id }, 'deleteRule')) q.refetch();
                            }}
                          />
                        </td>
                      </tr>
                    ),
                  )}
                </tbody>
              </table>
            )
          }
        </QueryView>
        <InlineProblem problem={act.problem} />
      </section>
      <section className="panel">
        <h2>New rule</h2>
        <RuleForm gatewayId={g.id} onDone={q.refetch} />
      </section>
    </>
  );
}

function RuleForm({ gatewayId, rule, onDone, onCancel }: { gatewayId: string; rule?: Rule; onDone: () => void; onCancel?: () => void }) {
  const [d, setD] = useState<Draft>(() => (rule ? { ...rule, patterns: rule.patterns.join('\n') } : blank));
  const [touched, setTouched] = useState(false);
  const act = useAction();
  const errs = ruleErrors(d);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (errs.name || errs.patterns || errs.pii) return;
    const body = {
      name: d.name.trim(),
      enabled: d.enabled,
      direction: d.direction,
      kind: d.kind,
      patterns: d.kind === 'pii' ? [] : v.lines(d.patterns),
      pii: d.kind === 'pii' ? d.pii : [],
      action: d.action,
      caseSensitive: d.caseSensitive,
    };
    const ok = rule
      ? await act.run(M.updateRule, { gatewayId, input: { id: rule.id, ...body } }, 'updateRule')
      : await act.run(M.createRule, { gatewayId, input: body }, 'createRule');
    if (ok) {
      if (!rule) {
        setD(blank);
        setTouched(false);
      }
      onDone();
    }
  };
  return (
    <form onSubmit={submit} noValidate aria-label={rule ? `Edit rule ${rule.name}` : 'New rule'}>
      <div className="form-grid">
        <Field label="Rule name" error={touched ? errs.name : null}>
          <input value={d.name} onChange={(e) => setD({ ...d, name: e.target.value })} />
        </Field>
        <Field label="Kind">
          <select value={d.kind} onChange={(e) => setD({ ...d, kind: e.target.value })}>
            <option value="keyword">Keywords</option>
            <option value="regex">Regular expressions</option>
            <option value="pii">Personal data (PII)</option>
          </select>
        </Field>
        <Field label="Direction">
          <select value={d.direction} onChange={(e) => setD({ ...d, direction: e.target.value })}>
            <option value="both">Requests and responses</option>
            <option value="request">Requests</option>
            <option value="response">Responses</option>
          </select>
        </Field>
        <Field label="Action">
          <select value={d.action} onChange={(e) => setD({ ...d, action: e.target.value })}>
            <option value="block">Block</option>
            <option value="redact">Redact</option>
            <option value="flag">Flag (log only)</option>
          </select>
        </Field>
      </div>
      {d.kind === 'pii' ? (
        <fieldset>
          <legend>Personal data to match</legend>
          <div className="checks">
            {PII_KINDS.map((k) => (
              <Check key={k} label={k} checked={d.pii.includes(k)} onChange={(b) => setD({ ...d, pii: b ? [...d.pii, k] : d.pii.filter((x) => x !== k) })} />
            ))}
          </div>
          {touched && errs.pii && <p className="field-error">{errs.pii}</p>}
        </fieldset>
      ) : (
        <Field label="Patterns" hint="One per line (up to 100)." error={touched ? errs.patterns : null}>
          <textarea rows={3} value={d.patterns} onChange={(e) => setD({ ...d, patterns: e.target.value })} spellCheck={false} />
        </Field>
      )}
      <div className="checks">
        <Check label="Case-sensitive" checked={d.caseSensitive} onChange={(b) => setD({ ...d, caseSensitive: b })} />
        <Check label="Enabled" checked={d.enabled} onChange={(b) => setD({ ...d, enabled: b })} />
      </div>
      <div className="form-actions">
        <Submit busy={act.busy}>{rule ? 'Save rule' : 'Create rule'}</Submit>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <InlineProblem problem={act.problem} />
    </form>
  );
}
