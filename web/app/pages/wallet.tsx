// The acting universe's wallet: balance, what running model calls hold, and the ledger.
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';
import { cents, when } from '../lib/format.js';
import { Empty, ErrorNote, Loading, Page } from '../ui.js';
import { href } from '../lib/router.js';
import { Table } from '../table.js';

interface Amount {
  amount: string;
  currency: string;
}
interface Entry {
  id: string;
  kind: string;
  amount: Amount;
  note: string | null;
  sessionId: string | null;
  createdAt: string;
}

const WALLET = doc`query Wallet {
  wallet { universe balance { amount currency } held { amount currency } }
  walletEntries(first: 100) { edges { node { id kind amount { amount currency } note sessionId createdAt } } }
}`;

export function WalletPage() {
  const w = useAsync(() => gql<{ wallet: { universe: string; balance: Amount; held: Amount }; walletEntries: { edges: { node: Entry }[] } }>(WALLET), []);
  return (
    <Page title="Wallet">
      <ErrorNote error={w.error} />
      {!w.data && w.loading ? <Loading what="the wallet" /> : null}
      {w.data ? (
        <>
          <dl className="stats card">
            <div>
              <dt>Balance</dt>
              <dd data-testid="wallet-balance">{cents(w.data.wallet.balance.amount, w.data.wallet.balance.currency)}</dd>
            </div>
            <div>
              <dt>Held by running model calls</dt>
              <dd>{cents(w.data.wallet.held.amount, w.data.wallet.held.currency)}</dd>
            </div>
            <div>
              <dt>Universe</dt>
              <dd>
                <code>{w.data.wallet.universe}</code>
              </dd>
            </div>
          </dl>
          <p className="muted">Platform-billed model calls are charged at list prices; a universe at or below zero cannot start turns.</p>
          <h2>Ledger</h2>
          {!w.data.walletEntries.edges.length ? (
            <Empty>No entries yet.</Empty>
          ) : (
            <Table
              rows={w.data.walletEntries.edges.map((e) => e.node)}
              rowKey={(e) => e.id}
              columns={[
                { label: 'When', cell: (e) => when(e.createdAt) },
                { label: 'Kind', cell: (e) => e.kind },
                { label: 'Amount', num: true, cell: (e) => cents(e.amount.amount, e.amount.currency) },
                {
                  label: 'Session',
                  cell: (e) =>
                    e.sessionId ? (
                      <a href={href('sessions', e.sessionId)}>
                        <code>{e.sessionId}</code>
                      </a>
                    ) : (
                      '—'
                    ),
                },
                { label: 'Note', cell: (e) => e.note ?? '' },
              ]}
            />
          )}
        </>
      ) : null}
    </Page>
  );
}
