import { useState } from 'react';
import type { ListResponses } from '@tributary/contracts';
import { useApi } from '../api/use-api';
import { Loaded, formatTime } from '../components/common';

export function AuditTrailPage({ workspace }: { workspace: string }) {
  // The page tokens of the pages walked through, oldest last; the current page is the last one.
  const [tokens, setTokens] = useState<string[]>([]);
  const pageToken = tokens.at(-1) ?? '';
  const trail = useApi<ListResponses['auditEvents']>(
    `workspaces/${workspace}/audit-events?page_size=50${pageToken ? `&page_token=${encodeURIComponent(pageToken)}` : ''}`,
  );
  const [open, setOpen] = useState<string>();
  return (
    <section>
      <h1>Audit trail of {workspace}</h1>
      <p className="hint">
        Every change, newest first: who did it, when, and what changed (secrets are never recorded).
      </p>
      <Loaded state={trail} what="the audit trail">
        {({ audit_events: list, next_page_token: next }) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Change</th>
                  <th scope="col">Resource</th>
                  <th scope="col">By</th>
                </tr>
              </thead>
              <tbody>
                {list.map((entry, index) => {
                  const key = entry.name ?? String(index);
                  return (
                    <tr key={key}>
                      <td>{formatTime(entry.time)}</td>
                      <td>
                        <button
                          type="button"
                          className="link-button"
                          aria-expanded={open === key}
                          onClick={() => setOpen(open === key ? undefined : key)}
                        >
                          {entry.type}
                        </button>
                        {open === key && (
                          <pre>
                            <code>{JSON.stringify(entry.data ?? {}, null, 2)}</code>
                          </pre>
                        )}
                      </td>
                      <td>{entry.resource_name}</td>
                      <td>{entry.actor}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {list.length === 0 && <p>No change recorded yet.</p>}
            <div className="actions">
              {tokens.length > 0 && (
                <button type="button" className="secondary" onClick={() => setTokens(tokens.slice(0, -1))}>
                  Newer
                </button>
              )}
              {next && (
                <button type="button" className="secondary" onClick={() => setTokens([...tokens, next])}>
                  Older
                </button>
              )}
            </div>
          </>
        )}
      </Loaded>
    </section>
  );
}
