// Model suggestions for a gateway's forms: the models its keys list, then
// the catalog's, per provider. Inputs keep free entry (a datalist): a model
// the catalog does not know yet, or a mock's directives, can still be typed.

import { Q } from '../../api/queries';
import type { CatalogModel, Connection, ProviderKey } from '../../api/types';
import { useGQL } from '../../components/data';

type ModelsData = { providerKeys: Connection<Pick<ProviderKey, 'provider' | 'alias' | 'models' | 'disabled'>>; models: Connection<CatalogModel> };

/** modelOptions lists the model ids offered for provider: the enabled keys' models first, then the catalog's chat and completion models. */
export function modelOptions(provider: string, keys: { provider: string; models: string[]; disabled?: boolean }[], catalog: CatalogModel[], kinds = ['chat', 'completion']): string[] {
  const out: string[] = [];
  const add = (m: string) => {
    if (m && !out.includes(m)) out.push(m);
  };
  keys.filter((k) => k.provider === provider && !k.disabled).forEach((k) => k.models.forEach(add));
  catalog.filter((m) => m.provider === provider && kinds.includes(m.kind)).forEach((m) => add(m.id));
  return out;
}

/**
 * useGatewayModels reads a gateway's keys and the catalog once, for every
 * picker of a form: models(provider) are the models offered for it,
 * aliases(provider) the aliases of its enabled keys.
 */
export function useGatewayModels(gatewayId: string) {
  const q = useGQL<ModelsData>(Q.gatewayModels, { id: gatewayId });
  const keys = q.data?.providerKeys?.data ?? [];
  const catalog = q.data?.models?.data ?? [];
  return {
    models: (provider: string) => modelOptions(provider, keys, catalog),
    aliases: (provider: string) => keys.filter((k) => k.provider === provider && !k.disabled).map((k) => k.alias),
  };
}

/** OptionList is the datalist of a model or alias input (its list attribute names id). */
export function OptionList({ id, models }: { id: string; models: string[] }) {
  return (
    <datalist id={id}>
      {models.map((m) => (
        <option key={m} value={m} />
      ))}
    </datalist>
  );
}
