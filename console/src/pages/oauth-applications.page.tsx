import { useState, type FormEvent } from 'react';
import type { ListResponses, OAuthApplicationResource } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, formatTime } from '../components/common';

/** OAuth applications: clients that sign a JWT with their private key to get a tracking token. */
export function OAuthApplicationsPage({ workspace }: { workspace: string }) {
  const { client } = useSession();
  const path = `workspaces/${workspace}/oauth-applications`;
  const applications = useApi<ListResponses['oauthApplications']>(`${path}?page_size=100`);
  const [displayName, setDisplayName] = useState('');
  const [keyId, setKeyId] = useState('key-1');
  const [pem, setPem] = useState('');
  const action = useAction();
  const create = async (event: FormEvent) => {
    event.preventDefault();
    const created = await action.run(() =>
      client.post<OAuthApplicationResource>(path, {
        oauth_application: { display_name: displayName, public_keys: [{ key_id: keyId, pem }] },
      }),
    );
    if (created) {
      setDisplayName('');
      setPem('');
      applications.reload();
    }
  };
  const remove = async (application: OAuthApplicationResource) => {
    if (!window.confirm(`Delete ${application.display_name}? Its clients can no longer get tokens.`)) return;
    await action.run(() => client.delete(application.name));
    applications.reload();
  };
  return (
    <section>
      <h1>OAuth applications of {workspace}</h1>
      <ErrorMessage error={action.error} />
      <Loaded state={applications} what="the OAuth applications">
        {({ oauth_applications: list }) =>
          list.length === 0 ? (
            <p>No OAuth application.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Application</th>
                  <th scope="col">Client id</th>
                  <th scope="col">Keys</th>
                  <th scope="col">Token lifetime</th>
                  <th scope="col">Created</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {list.map((application) => (
                  <tr key={application.name}>
                    <td>{application.display_name}</td>
                    <td>
                      <code>{application.client_id}</code>
                    </td>
                    <td>{application.public_keys.map((key) => key.key_id).join(', ')}</td>
                    <td>{application.token_lifetime_seconds} s</td>
                    <td>{formatTime(application.create_time)}</td>
                    <td>
                      <button type="button" className="danger" onClick={() => remove(application)}>
                        Delete {application.display_name}
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
        <h2>New OAuth application</h2>
        <label htmlFor="oauth-name">Name</label>
        <input
          id="oauth-name"
          value={displayName}
          onChange={(event) => setDisplayName(event.target.value)}
          required
        />
        <label htmlFor="oauth-key-id">Key id</label>
        <input id="oauth-key-id" value={keyId} onChange={(event) => setKeyId(event.target.value)} required />
        <label htmlFor="oauth-pem">Public key (PEM)</label>
        <textarea
          id="oauth-pem"
          rows={6}
          value={pem}
          onChange={(event) => setPem(event.target.value)}
          required
          placeholder="-----BEGIN PUBLIC KEY-----"
        />
        <button type="submit" disabled={action.busy}>
          Create application
        </button>
      </form>
    </section>
  );
}
