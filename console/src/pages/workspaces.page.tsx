import type { ListResponses } from '@tributary/contracts';
import { useApi } from '../api/use-api';
import { Loaded, formatTime, lastSegment } from '../components/common';
import { Link } from '../router';

export function WorkspacesPage() {
  const workspaces = useApi<ListResponses['workspaces']>('workspaces?page_size=100');
  return (
    <section>
      <h1>Workspaces</h1>
      <Loaded state={workspaces} what="the workspaces">
        {({ workspaces: list }) =>
          list.length === 0 ? (
            <p>
              This access token reaches no workspace. Create one with the CLI (`tributary workspaces create`).
            </p>
          ) : (
            <ul className="cards">
              {list.map((workspace) => (
                <li key={workspace.name} className="card">
                  <h2>
                    <Link to={`/workspaces/${lastSegment(workspace.name)}`}>
                      {workspace.display_name || lastSegment(workspace.name)}
                    </Link>
                  </h2>
                  <p className="muted">
                    {workspace.name} · id {workspace.id} · created {formatTime(workspace.create_time)}
                  </p>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
