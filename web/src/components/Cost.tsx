// Cost shows an amount of dollars that may leave out requests answered by a
// model without a price: such a cost reads "unpriced" (or "$x + n
// unpriced"), never a bare $0.00, and says why on hover.

import { formatCost } from '../lib/format';

/** Cost shows usd; unpriced is the number of requests answered without a price (0 or absent: none). */
export function Cost({ usd, unpriced }: { usd: number | null | undefined; unpriced?: number | null }) {
  const text = formatCost(usd, unpriced);
  if (!unpriced || unpriced <= 0) return <>{text}</>;
  const what = unpriced === 1 ? '1 request was' : `${unpriced.toLocaleString('en-US')} requests were`;
  return (
    <span className="unpriced" data-unpriced={unpriced} title={`${what} answered by a model without a price: its cost counts as 0. Add the price on Model prices.`}>
      {text}
    </span>
  );
}

/** logUnpriced is the unpriced count of one request log: 1 when its model had no price. */
export const logUnpriced = (l: { priced?: boolean | null }) => (l.priced === false ? 1 : 0);

/** unpricedSub is the sub-line of a cost figure that leaves out unpriced requests (undefined when none does). */
export function unpricedSub(unpriced: number | null | undefined): string | undefined {
  if (!unpriced || unpriced <= 0) return undefined;
  return `+ ${unpriced.toLocaleString('en-US')} unpriced request${unpriced === 1 ? '' : 's'} not counted`;
}
