import { useEffect, useState, type FormEvent } from 'react';
import type { ListResponses } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, formatTime, lastSegment } from '../components/common';

/** The Config API's `Regulation` (docs/regulations.md §2), as far as this page reads it. */
interface Regulation {
  name: string;
  regulate_id: string;
  regulation_type: string;
  attributes: { name: string; values: string[] };
  source_name: string;
  status: string;
  created_at: string;
  finished_at?: string;
  stream_status?: Array<{
    id: string;
    name: string;
    destination_status: Array<{ id: string; name: string; status: string; err_string: string }>;
  }>;
}

const TYPES = [
  ['SUPPRESS_WITH_DELETE', 'Suppress and delete (stores and destinations)'],
  ['SUPPRESS_ONLY', 'Suppress new messages'],
  ['UNSUPPRESS', 'Lift a suppression'],
  ['DELETE_ONLY', 'Delete (stores and destinations)'],
  ['DELETE_INTERNAL', "Delete from Tributary's stores only"],
  ['SUPPRESS_WITH_DELETE_INTERNAL', "Suppress, and delete from Tributary's stores"],
  ['DELETE_ARCHIVE_ONLY', 'Delete from the message log only (one source)'],
] as const;

const FINAL = new Set(['finished', 'partial_success', 'failed', 'invalid']);

function statusBadge(status: string): string {
  if (status === 'finished') return 'badge ok';
  if (status === 'failed' || status === 'invalid') return 'badge outcome-discarded';
  if (status === 'partial_success' || status === 'running') return 'badge outcome-retried';
  return 'badge';
}

/**
 * Privacy regulations of a workspace: suppress users, delete what is stored about them, forward the
 * deletion. Each regulation shows its status at every destination of every source in scope, and is
 * read again every few seconds until the router has finished it.
 */
export function RegulationsPage({ workspace }: { workspace: string }) {
  const { client } = useSession();
  const path = `workspaces/${workspace}/regulations`;
  const [refreshing, setRefreshing] = useState(true);
  const regulations = useApi<{ regulations: Regulation[]; next_page_token: string }>(
    `${path}?page_size=1000`,
    refreshing ? 2_000 : undefined,
  );
  const sources = useApi<ListResponses['sources']>(`workspaces/${workspace}/sources?page_size=100`);
  const [type, setType] = useState<string>(TYPES[0][0]);
  const [scope, setScope] = useState('');
  const [userIds, setUserIds] = useState('');
  const action = useAction();
  const pending = (regulations.data?.regulations ?? []).some((regulation) => !FINAL.has(regulation.status));
  // Read again every few seconds only while the router still works on one.
  useEffect(() => {
    if (regulations.data) setRefreshing(pending);
  }, [regulations.data, pending]);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const values = userIds
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const created = await action.run(() =>
      client.post<Regulation>(scope ? `${scope}/regulations` : path, {
        regulation_type: type,
        attributes: { name: 'userId', values },
      }),
    );
    if (created) {
      setUserIds('');
      setRefreshing(true);
      regulations.reload();
    }
  };
  const cancel = async (regulation: Regulation) => {
    if (!window.confirm(`Cancel the ${regulation.regulation_type} regulation ${regulation.regulate_id}?`))
      return;
    await action.run(() => client.delete(regulation.name));
    regulations.reload();
  };

  return (
    <section>
      <h1>Regulations of {workspace}</h1>
      <p>
        Suppress users (their new messages are dropped) and delete what Tributary stores about them, here and
        at the destinations that support deletion.
      </p>
      <ErrorMessage error={action.error} />
      <Loaded state={regulations} what="the regulations">
        {({ regulations: list }) =>
          list.length === 0 ? (
            <p>No regulation.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Type</th>
                  <th scope="col">Users</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Status</th>
                  <th scope="col">Destinations</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {[...list].reverse().map((regulation) => (
                  <tr key={regulation.regulate_id}>
                    <td>{formatTime(regulation.created_at)}</td>
                    <td>
                      <code>{regulation.regulation_type}</code>
                    </td>
                    <td>{regulation.attributes.values.join(', ')}</td>
                    <td>{regulation.source_name ? lastSegment(regulation.source_name) : 'Workspace'}</td>
                    <td>
                      <span className={statusBadge(regulation.status)}>{regulation.status}</span>
                    </td>
                    <td>
                      {/* The destinations in scope are taken when the router starts the work. */}
                      {regulation.status === 'initialized' && <span className="muted">Not started</span>}
                      {(regulation.stream_status ?? []).flatMap((stream) =>
                        stream.destination_status.map((destination) => (
                          <div key={destination.id} title={destination.err_string || undefined}>
                            {lastSegment(stream.name)} → {destination.name}:{' '}
                            <span className={statusBadge(destination.status)}>{destination.status}</span>
                          </div>
                        )),
                      )}
                    </td>
                    <td>
                      {regulation.status === 'initialized' && (
                        <button
                          type="button"
                          className="danger"
                          aria-label={`Cancel regulation ${regulation.regulate_id}`}
                          onClick={() => cancel(regulation)}
                        >
                          Cancel
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <form className="card" onSubmit={create}>
        <h2>New regulation</h2>
        <label htmlFor="regulation-type">Type</label>
        <select id="regulation-type" value={type} onChange={(event) => setType(event.target.value)}>
          {TYPES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor="regulation-scope">Scope</label>
        <select id="regulation-scope" value={scope} onChange={(event) => setScope(event.target.value)}>
          <option value="">The whole workspace</option>
          {(sources.data?.sources ?? []).map((source) => (
            <option key={source.name} value={source.name}>
              {source.display_name || lastSegment(source.name)}
            </option>
          ))}
        </select>
        <label htmlFor="regulation-users">User ids, one per line</label>
        <textarea
          id="regulation-users"
          rows={4}
          value={userIds}
          onChange={(event) => setUserIds(event.target.value)}
          required
        />
        <button type="submit" disabled={action.busy}>
          Create regulation
        </button>
      </form>
    </section>
  );
}
