import { useState, type FormEvent } from 'react';
import type { ListResponses, SourceResource } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, formatTime, lastSegment } from '../components/common';
import { Link, navigate } from '../router';

export function SourcesPage({ workspace }: { workspace: string }) {
  const sources = useApi<ListResponses['sources']>(`workspaces/${workspace}/sources?page_size=100`);
  return (
    <section>
      <h1>Sources of {workspace}</h1>
      <Loaded state={sources} what="the sources">
        {({ sources: list }) =>
          list.length === 0 ? (
            <p>No source yet. Create one below to get a write key.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Created</th>
                  <th scope="col">Live</th>
                </tr>
              </thead>
              <tbody>
                {list.map((source) => (
                  <tr key={source.name}>
                    <td>
                      <Link to={`/workspaces/${workspace}/sources/${lastSegment(source.name)}`}>
                        {lastSegment(source.name)}
                      </Link>
                    </td>
                    <td>{lastSegment(source.catalog_name)}</td>
                    <td>{formatTime(source.create_time)}</td>
                    <td>
                      <Link to={`/workspaces/${workspace}/sources/${lastSegment(source.name)}/debugger`}>
                        Debugger
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <CreateSourceForm workspace={workspace} />
    </section>
  );
}

function CreateSourceForm({ workspace }: { workspace: string }) {
  const { client } = useSession();
  const catalog = useApi<ListResponses['catalogSources']>('catalog/sources?page_size=100');
  const [slug, setSlug] = useState('');
  const [kind, setKind] = useState('catalog/sources/javascript');
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!/^[a-z0-9][a-z0-9-]*$/.test(slug)) {
      action.run(() => Promise.reject(new Error('The name must be lower-case letters, digits and dashes.')));
      return;
    }
    const created = await action.run(() =>
      client.post<SourceResource>(`workspaces/${workspace}/sources`, {
        source: { name: `workspaces/${workspace}/sources/${slug}`, catalog_name: kind },
      }),
    );
    if (created) navigate(`/workspaces/${workspace}/sources/${lastSegment(created.name)}`);
  };
  return (
    <form className="card" onSubmit={submit}>
      <h2>New source</h2>
      <label htmlFor="source-slug">Source name</label>
      <input
        id="source-slug"
        value={slug}
        onChange={(event) => setSlug(event.target.value.trim())}
        placeholder="my-website"
      />
      <label htmlFor="source-kind">Kind</label>
      <select id="source-kind" value={kind} onChange={(event) => setKind(event.target.value)}>
        {(catalog.data?.sources ?? [{ name: 'catalog/sources/javascript', display_name: 'Javascript' }]).map(
          (entry) => (
            <option key={entry.name} value={entry.name}>
              {entry.display_name}
            </option>
          ),
        )}
      </select>
      <ErrorMessage error={action.error} />
      <button type="submit" disabled={action.busy}>
        Create source
      </button>
    </form>
  );
}
