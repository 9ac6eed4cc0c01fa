// One gateway: its activity (the default tab), its settings, routes, provider keys, content rules, tokens,
// budget, circuit breakers, guardrail hits and traces, one tab each.

import { Q } from '../api/queries';
import type { Gateway } from '../api/types';
import { QueryView, useGQL } from '../components/data';
import { CopyButton, PageHeader } from '../components/ui';
import { Link } from '../lib/router';
import { TabList, TabPanel } from '../components/Tabs';
import { Settings } from './gateway/Settings';
import { Routes } from './gateway/Routes';
import { Keys } from './gateway/Keys';
import { Rules } from './gateway/Rules';
import { Tokens } from './gateway/Tokens';
import { BudgetTab } from './gateway/Budget';
import { Health, Guardrails, Traces } from './gateway/Observe';
import { Activity } from './gateway/Activity';
import { gatewayBaseURL } from '../lib/snippets';

const TABS = [
  ['activity', 'Activity'],
  ['settings', 'Settings'],
  ['routes', 'Routes'],
  ['keys', 'Provider keys'],
  ['rules', 'Content rules'],
  ['tokens', 'Tokens'],
  ['budget', 'Budget'],
  ['health', 'Circuit breakers'],
  ['guardrails', 'Guardrails'],
  ['traces', 'Traces'],
] as const;

export function GatewayDetail({ id, tab }: { id: string; tab: string }) {
  const q = useGQL<{ gateway: Gateway }>(Q.gateway, { id });
  return (
    <QueryView<Gateway> q={q} field="gateway" what="this gateway">
      {(g) => (
        <>
          <PageHeader
            title={g.name}
            subtitle={
              <>
                <Link to="/ui/gateways">Gateways</Link> / tenant <strong>{g.tenantId}</strong> · base URL{' '}
                <code data-testid="gateway-base-url">{gatewayBaseURL(g, window.location.origin)}</code>{' '}
                <CopyButton text={gatewayBaseURL(g, window.location.origin)} label="Copy base URL" />
              </>
            }
          />
          <TabList prefix="gw" label="Gateway sections" current={tab} tabs={TABS.map(([t, label]) => ({ id: t, label, href: `/ui/gateways/${g.id}/${t}` }))} />
          <TabPanel prefix="gw" current={tab}>
            {tab === 'activity' && <Activity gateway={g} />}
            {tab === 'settings' && <Settings gateway={g} onSaved={q.refetch} />}
            {tab === 'routes' && <Routes gateway={g} onSaved={q.refetch} />}
            {tab === 'keys' && <Keys gateway={g} />}
            {tab === 'rules' && <Rules gateway={g} />}
            {tab === 'tokens' && <Tokens gateway={g} />}
            {tab === 'budget' && <BudgetTab gateway={g} onSaved={q.refetch} />}
            {tab === 'health' && <Health gateway={g} />}
            {tab === 'guardrails' && <Guardrails gateway={g} />}
            {tab === 'traces' && <Traces gateway={g} />}
          </TabPanel>
        </>
      )}
    </QueryView>
  );
}
