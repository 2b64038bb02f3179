// The dashboard: a single page that talks only GraphQL (/graphql for queries and mutations,
// /graphql/stream for the live session events), signed in by the browser's cookie.
import { createRoot } from 'react-dom/client';
import { useEffect, useState, type ReactNode } from 'react';
import './styles.css';
import { gql, setUniverse, whenSignedOut } from '../shared/graphql.js';
import { ME, type Me } from './lib/account.js';
import { href, useRoute } from './lib/router.js';
import { ErrorNote, Loading } from './ui.js';
import { TokensPage } from './pages/tokens.js';
import { UniversesPage } from './pages/universes.js';
import { AgentsPage } from './pages/agents.js';
import { AgentPage } from './pages/agent.js';
import { NewAgentPage } from './pages/new-agent.js';
import { SessionsPage } from './pages/sessions.js';
import { SessionPage } from './pages/session.js';
import { WalletPage } from './pages/wallet.js';
import { EnvironmentsPage } from './pages/environments.js';
import { MemoryStoresPage } from './pages/memory-stores.js';
import { VaultsPage } from './pages/vaults.js';
import { RoutinesPage } from './pages/routines.js';
import { WebhooksPage } from './pages/webhooks.js';
import { FilesPage } from './pages/files.js';
import { SkillsPage } from './pages/skills.js';
import { SubscriptionsPage } from './pages/subscriptions.js';
import { ChannelsPage } from './pages/channels.js';

const UNIVERSE_KEY = 'agent-service.universe';

const NAV: [string, string][] = [
  ['agents', 'Agents'],
  ['sessions', 'Sessions'],
  ['environments', 'Environments'],
  ['memory-stores', 'Memory stores'],
  ['vaults', 'Vaults'],
  ['routines', 'Routines'],
  ['webhooks', 'Webhooks'],
  ['files', 'Files'],
  ['skills', 'Skills'],
  ['channels', 'Channels'],
  ['subscriptions', 'Model subscriptions'],
  ['tokens', 'API tokens'],
  ['universes', 'Universes'],
  ['wallet', 'Wallet'],
];

function signIn(): void {
  location.assign(`/auth/login?next=${encodeURIComponent('/' + location.hash)}`);
}

function Content({ route, me, onUniverses }: { route: string[]; me: Me | null; onUniverses: () => void }): ReactNode {
  const [section = 'agents', id, sub] = route;
  switch (section) {
    case 'tokens':
      return me ? <TokensPage me={me} /> : <Loading what="your account" />;
    case 'universes':
      return me ? <UniversesPage me={me} onChanged={onUniverses} /> : <Loading what="your universes" />;
    case 'agents':
      if (id === 'new') return <NewAgentPage />;
      return id ? <AgentPage id={id} tab={sub ?? 'settings'} /> : <AgentsPage />;
    case 'sessions':
      return id ? <SessionPage id={id} /> : <SessionsPage />;
    case 'wallet':
      return <WalletPage />;
    case 'files':
      return <FilesPage />;
    case 'skills':
      return <SkillsPage />;
    case 'routines':
      return <RoutinesPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'subscriptions':
      return <SubscriptionsPage />;
    case 'environments':
      return <EnvironmentsPage />;
    case 'memory-stores':
      return <MemoryStoresPage />;
    case 'vaults':
      return <VaultsPage />;
    case 'channels':
      return <ChannelsPage tab={id ?? 'connections'} />;
    default:
      return (
        <p>
          Nothing here. <a href={href('agents')}>Go to the agents.</a>
        </p>
      );
  }
}

function App() {
  const route = useRoute();
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [universeTick, setUniverseTick] = useState(0);
  // On a phone the sections are a menu behind one button (not a strip that scrolls sideways).
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [route.join('/')]);

  const load = async () => {
    try {
      setMe(await gql<Me>(ME));
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e.code === 'not_found' || e.code === 'universe_mismatch') {
        // The remembered universe is gone: back to the personal one.
        localStorage.removeItem(UNIVERSE_KEY);
        setUniverse(null);
        setUniverseTick((t) => t + 1);
        setMe(await gql<Me>(ME));
      } else setError(e);
    }
  };

  useEffect(() => {
    whenSignedOut(signIn);
    void load();
  }, []);

  const switchUniverse = (slug: string) => {
    const personal = me?.universes.find((u) => u.isPersonal)?.slug;
    if (slug === personal) localStorage.removeItem(UNIVERSE_KEY);
    else localStorage.setItem(UNIVERSE_KEY, slug);
    setUniverse(slug === personal ? null : slug);
    setUniverseTick((t) => t + 1);
    void load();
  };

  if (error)
    return (
      <main className="boot">
        <ErrorNote error={error} prefix="The dashboard could not load" />
        <button type="button" onClick={() => location.reload()}>
          Try again
        </button>
      </main>
    );
  // The page's own data loads alongside the account (not after it): the first view comes sooner.
  const section = route[0] ?? 'agents';
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <a className="brand" href={href('agents')}>
          Agent Service
        </a>
        {me ? (
          <>
            <div className="universe">
              <label htmlFor="universe">Universe</label>
              <select id="universe" value={me.whoami.universe.slug} onChange={(e) => switchUniverse(e.currentTarget.value)}>
                {me.universes.map((u) => (
                  <option key={u.slug} value={u.slug}>
                    {u.isPersonal ? 'Personal' : u.name} · {u.slug}
                  </option>
                ))}
              </select>
            </div>
            <span className="who">{me.whoami.user.email}</span>
          </>
        ) : (
          <span className="who" role="status">
            Loading your account…
          </span>
        )}
        <form method="post" action="/auth/logout" className="signout">
          <button type="submit" className="secondary">
            Sign out
          </button>
        </form>
      </header>
      <nav className="nav" aria-label="Sections">
        <button type="button" className="secondary menu-button" aria-expanded={menuOpen} aria-controls="sections" onClick={() => setMenuOpen(!menuOpen)}>
          {menuOpen ? 'Close menu' : `Menu · ${NAV.find(([key]) => key === section)?.[1] ?? 'Sections'}`}
        </button>
        <ul id="sections" className={menuOpen ? 'open' : undefined}>
          {NAV.map(([key, label]) => (
            <li key={key}>
              <a href={href(key)} aria-current={section === key ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                {label}
              </a>
            </li>
          ))}
          <li>
            <a href="/graphql">GraphiQL</a>
          </li>
        </ul>
      </nav>
      <main id="main" key={universeTick}>
        <Content route={route} me={me} onUniverses={() => void load()} />
      </main>
    </>
  );
}

// Before the first render: pages start their queries in the remembered universe.
setUniverse(localStorage.getItem(UNIVERSE_KEY));
createRoot(document.getElementById('app')!).render(<App />);
