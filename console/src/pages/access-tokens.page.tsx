import { useState, type FormEvent } from 'react';
import type { AccessTokenResource, ListResponses } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { CopyButton, ErrorMessage, Loaded, formatTime, lastSegment } from '../components/common';

/** Personal access tokens: only an instance administrator may list, create and delete them. */
export function AccessTokensPage() {
  const { client } = useSession();
  const tokens = useApi<ListResponses['accessTokens']>('access-tokens?page_size=100');
  const workspaces = useApi<ListResponses['workspaces']>('workspaces?page_size=100');
  const [description, setDescription] = useState('');
  const [scope, setScope] = useState('workspace:read');
  const [chosen, setChosen] = useState<string[]>([]);
  const [created, setCreated] = useState<AccessTokenResource>();
  const action = useAction();
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setCreated(undefined);
    const token = await action.run(() =>
      client.post<AccessTokenResource>('access-tokens', {
        access_token: { description, scopes: scope, workspace_names: chosen },
      }),
    );
    if (token) {
      setCreated(token);
      setDescription('');
      tokens.reload();
    }
  };
  const remove = async (token: AccessTokenResource) => {
    if (
      !window.confirm(`Delete ${token.name} (${token.description})? Whatever uses it stops working at once.`)
    )
      return;
    await action.run(() => client.delete(token.name));
    tokens.reload();
  };
  return (
    <section>
      <h1>Access tokens</h1>
      <ErrorMessage error={action.error} />
      <Loaded state={tokens} what="the access tokens">
        {({ access_tokens: list }) =>
          list.length === 0 ? (
            <p>No personal access token yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Token</th>
                  <th scope="col">Description</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Workspaces</th>
                  <th scope="col">Created</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {list.map((token) => (
                  <tr key={token.name}>
                    <td>{lastSegment(token.name)}</td>
                    <td>{token.description}</td>
                    <td>{token.scopes}</td>
                    <td>{token.workspace_names.map(lastSegment).join(', ')}</td>
                    <td>{formatTime(token.create_time)}</td>
                    <td>
                      <button type="button" className="danger" onClick={() => remove(token)}>
                        Delete token {lastSegment(token.name)}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <form className="card" onSubmit={create}>
        <h2>New access token</h2>
        <label htmlFor="token-description">Description</label>
        <input
          id="token-description"
          value={description}
          onChange={(event) => setDescription(event.target.value)}
          placeholder="CI deploys"
        />
        <label htmlFor="token-scope">Scope</label>
        <select id="token-scope" value={scope} onChange={(event) => setScope(event.target.value)}>
          <option value="workspace:read">read only (workspace:read)</option>
          <option value="workspace">read and write (workspace)</option>
        </select>
        <fieldset>
          <legend>Workspaces</legend>
          {(workspaces.data?.workspaces ?? []).map((workspace) => (
            <div className="checkbox" key={workspace.name}>
              <input
                id={`token-ws-${workspace.id}`}
                type="checkbox"
                checked={chosen.includes(workspace.name)}
                onChange={(event) =>
                  setChosen(
                    event.target.checked
                      ? [...chosen, workspace.name]
                      : chosen.filter((name) => name !== workspace.name),
                  )
                }
              />
              <label htmlFor={`token-ws-${workspace.id}`}>{lastSegment(workspace.name)}</label>
            </div>
          ))}
        </fieldset>
        <button type="submit" disabled={action.busy}>
          Create token
        </button>
        {created?.token && (
          <div className="notice" role="status">
            <p>Token {lastSegment(created.name)} created. Copy it now: it is shown only once.</p>
            <code>{created.token}</code> <CopyButton text={created.token} label="Copy the new token" />
          </div>
        )}
      </form>
    </section>
  );
}
