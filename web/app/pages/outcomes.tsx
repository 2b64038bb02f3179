// A session's outcomes (issue #33) on its page: the active (or latest) outcome, its status and
// iterations, and each evaluation's per-criterion verdict. Read again when the session's status
// changes and every two seconds while it runs (an evaluation ends while the session stays running).
import { useEffect } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';

interface Criterion {
  criterion: string;
  passed: boolean;
  explanation: string;
}
interface Evaluation {
  iteration: number;
  result: string;
  summary: string;
  criteria: Criterion[];
}
interface Outcome {
  id: string;
  description: string;
  status: string;
  iterations: number;
  maxIterations: number;
  evaluations: Evaluation[];
}

const OUTCOMES = doc`query SessionOutcomes($id: String!) { sessionOutcomes(sessionId: $id, limit: 100) { data { id description status iterations maxIterations evaluations { iteration result summary criteria { criterion passed explanation } } } } }`;

const STATUS_TEXT: Record<string, string> = {
  active: 'active',
  satisfied: 'satisfied',
  failed: 'failed',
  max_iterations_reached: 'out of iterations',
  interrupted: 'interrupted',
};

export function SessionOutcomes({ sessionId, status }: { sessionId: string; status: string | null }) {
  const outcomes = useAsync(() => gql<{ sessionOutcomes: { data: Outcome[] } }>(OUTCOMES, { id: sessionId }).then((d) => d.sessionOutcomes.data), [sessionId]);
  const reload = outcomes.reload;
  // A status change is the reason to read again.
  useEffect(() => {
    reload();
    if (status !== 'running') return;
    const timer = setInterval(reload, 2000);
    return () => clearInterval(timer);
  }, [status, reload]);
  const list = outcomes.data ?? [];
  const shown = list.find((o) => o.status === 'active') ?? list.at(-1);
  if (!shown) return null;
  return (
    <section className="card compact" aria-label="Outcome" data-testid="session-outcome">
      <h2>
        Outcome · <span data-testid="outcome-status">{STATUS_TEXT[shown.status] ?? shown.status}</span>
      </h2>
      <p>{shown.description}</p>
      <p data-testid="outcome-iterations">
        Evaluations: {shown.iterations} of at most {shown.maxIterations}
      </p>
      {shown.evaluations.map((e) => (
        <div key={e.iteration} data-testid="outcome-evaluation">
          <h3>
            Evaluation {e.iteration}: {e.result.replace('_', ' ')}
          </h3>
          {e.summary ? <p>{e.summary}</p> : null}
          <ul>
            {e.criteria.map((c) => (
              <li key={c.criterion} data-testid="outcome-criterion" data-passed={c.passed ? 'yes' : 'no'}>
                {c.passed ? '✓ passed' : '✗ not passed'}: {c.criterion}
                {c.explanation ? ` — ${c.explanation}` : ''}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
