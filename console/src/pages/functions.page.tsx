import { useState, type FormEvent } from 'react';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, formatTime } from '../components/common';
import {
  FUNCTION_KINDS,
  kindLabel,
  starterCode,
  type FunctionKind,
  type FunctionSettingDeclaration,
} from '../components/function-samples';
import { Link, navigate } from '../router';

/** The Config API's `Function` (docs/functions.md), as far as the console reads it. */
export interface FunctionResource {
  name: string;
  id: string;
  type: FunctionKind;
  display_name: string;
  code: string;
  settings: FunctionSettingDeclaration[];
  version: number;
  deployed_version: number;
  created_at: string;
  update_time: string;
}

/**
 * A workspace's functions (source, destination and insert), each linking to its editor, and a form
 * that creates one from the kind's starter code.
 */
export function FunctionsPage({ workspace }: { workspace: string }) {
  const { client } = useSession();
  const path = `workspaces/${workspace}/functions`;
  const functions = useApi<{ functions: FunctionResource[]; next_page_token: string }>(
    `${path}?page_size=100`,
  );
  const [displayName, setDisplayName] = useState('');
  const [kind, setKind] = useState<FunctionKind>('DESTINATION');
  const action = useAction();

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const created = await action.run(() =>
      client.post<FunctionResource>(`${path}?type=${kind}`, {
        function: { display_name: displayName, code: starterCode(kind), buildpack: 'boreal', settings: [] },
      }),
    );
    if (created) navigate(`/workspaces/${workspace}/functions/${created.id}`);
  };

  return (
    <section>
      <h1>Functions of {workspace}</h1>
      <p>
        Your own JavaScript, run by Tributary in a sandbox: destination functions deliver messages to any API,
        insert functions change messages on their way to a destination, source functions turn webhooks into
        messages.
      </p>
      <Loaded state={functions} what="the functions">
        {({ functions: list }) =>
          list.length === 0 ? (
            <p>No function yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Function</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Version</th>
                  <th scope="col">Deployed</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.map((fn) => (
                  <tr key={fn.id}>
                    <td>
                      <Link to={`/workspaces/${workspace}/functions/${fn.id}`}>
                        {fn.display_name || fn.id}
                      </Link>
                      <div className="muted">
                        <code>{fn.id}</code>
                      </div>
                    </td>
                    <td>{kindLabel(fn.type)}</td>
                    <td>{fn.version}</td>
                    <td>
                      {fn.deployed_version === fn.version ? (
                        <span className="badge ok">v{fn.deployed_version}</span>
                      ) : (
                        <span
                          className="badge outcome-retried"
                          title="A newer version is saved but not deployed"
                        >
                          v{fn.deployed_version}
                        </span>
                      )}
                    </td>
                    <td>{formatTime(fn.update_time)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <form className="card" onSubmit={create}>
        <h2>New function</h2>
        <ErrorMessage error={action.error} />
        <label htmlFor="function-name">Name</label>
        <input
          id="function-name"
          value={displayName}
          onChange={(event) => setDisplayName(event.target.value)}
          required
          autoComplete="off"
        />
        <label htmlFor="function-kind">Kind</label>
        <select
          id="function-kind"
          value={kind}
          onChange={(event) => setKind(event.target.value as FunctionKind)}
        >
          {FUNCTION_KINDS.map((entry) => (
            <option key={entry.kind} value={entry.kind}>
              {entry.label}
            </option>
          ))}
        </select>
        <p className="hint">{FUNCTION_KINDS.find((entry) => entry.kind === kind)?.description}.</p>
        <button type="submit" disabled={action.busy}>
          Create function
        </button>
      </form>
    </section>
  );
}
