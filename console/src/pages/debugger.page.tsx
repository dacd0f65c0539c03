import { useEffect, useMemo, useRef, useState } from 'react';
import type { MessageDeliveriesResponse } from '@tributary/contracts';
import { isFinalOutcome } from '@tributary/contracts/delivery/delivery-outcome';
import { followLiveEvents, type LiveEvent } from '../api/live-events';
import { useSession } from '../api/use-api';
import { ErrorMessage, lastSegment } from '../components/common';
import { Link } from '../router';

/** Events kept on the page; the stream itself sends every message, the page shows the newest. */
const KEPT_EVENTS = 2000;
/** How many of the newest shown events have their destinations looked up, and how often. */
const DELIVERY_LOOKUP_COUNT = 50;
const DELIVERY_LOOKUP_INTERVAL_MS = 2000;
const TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'];

type Deliveries = MessageDeliveriesResponse['message_deliveries'][number]['destinations'];

function describe(message: Record<string, unknown>): string {
  const type = String(message.type ?? '');
  if (type === 'track') return String(message.event ?? '');
  if (type === 'page' || type === 'screen')
    return String(message.name ?? (message.properties as { path?: string } | undefined)?.path ?? '');
  if (type === 'group') return String(message.groupId ?? '');
  if (type === 'alias') return `${String(message.previousId ?? '')} → ${String(message.userId ?? '')}`;
  return '';
}

function userOf(message: Record<string, unknown>): string {
  return String(message.userId ?? message.anonymousId ?? '');
}

export function DebuggerPage({ workspace, source }: { workspace: string; source: string }) {
  const { client, authorization } = useSession();
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [status, setStatus] = useState<{ state: string; detail?: string }>({ state: 'connecting' });
  const [paused, setPaused] = useState(false);
  const [typeFilter, setTypeFilter] = useState('');
  const [text, setText] = useState('');
  const [selected, setSelected] = useState<number>();
  const [received, setReceived] = useState(0);
  const [deliveries, setDeliveries] = useState<Map<string, Deliveries>>(new Map());
  const [deliveryError, setDeliveryError] = useState<string>();
  const pausedRef = useRef(paused);
  const heldBack = useRef<LiveEvent[]>([]);
  const [heldCount, setHeldCount] = useState(0);

  useEffect(() => {
    pausedRef.current = paused;
    if (!paused && heldBack.current.length > 0) {
      const held = heldBack.current;
      heldBack.current = [];
      setHeldCount(0);
      setEvents((shown) => [...held.reverse(), ...shown].slice(0, KEPT_EVENTS));
    }
  }, [paused]);

  useEffect(() => {
    setEvents([]);
    setReceived(0);
    const stop = followLiveEvents(`workspaces/${workspace}/sources/${source}/live-events`, authorization, {
      onEvent(event) {
        setReceived((count) => count + 1);
        if (pausedRef.current) {
          heldBack.current.push(event);
          if (heldBack.current.length > KEPT_EVENTS) heldBack.current.shift();
          setHeldCount(heldBack.current.length);
          return;
        }
        setEvents((shown) => [event, ...shown].slice(0, KEPT_EVENTS));
      },
      onStatus(state, detail) {
        setStatus({ state, detail });
      },
    });
    return stop;
  }, [workspace, source, authorization]);

  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return events.filter((event) => {
      if (typeFilter && event.message.type !== typeFilter) return false;
      if (!needle) return true;
      return JSON.stringify(event.message).toLowerCase().includes(needle);
    });
  }, [events, typeFilter, text]);

  // Where the newest messages went, until each destination's outcome is final.
  const shownRef = useRef(shown);
  shownRef.current = shown;
  const deliveriesRef = useRef(deliveries);
  deliveriesRef.current = deliveries;
  useEffect(() => {
    let cancelled = false;
    const lookUp = async () => {
      const ids = shownRef.current
        .slice(0, DELIVERY_LOOKUP_COUNT)
        .map((event) => String(event.message.messageId ?? ''))
        .filter((id) => {
          if (!id) return false;
          const known = deliveriesRef.current.get(id);
          return !known || known.length === 0 || known.some((delivery) => !isFinalOutcome(delivery.outcome));
        });
      if (ids.length === 0) return;
      const query = ids.map((id) => `message_id=${encodeURIComponent(id)}`).join('&');
      try {
        const answer = await client.get<MessageDeliveriesResponse>(
          `workspaces/${workspace}/sources/${source}/message-deliveries?${query}`,
        );
        if (cancelled) return;
        setDeliveryError(undefined);
        setDeliveries((old) => {
          const next = new Map(old);
          for (const entry of answer.message_deliveries) next.set(entry.message_id, entry.destinations);
          return next;
        });
      } catch (error) {
        if (!cancelled)
          setDeliveryError(`Could not look up where messages went. ${(error as Error).message}`);
      }
    };
    const timer = setInterval(lookUp, DELIVERY_LOOKUP_INTERVAL_MS);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [client, workspace, source]);

  const selectedEvent = events.find((event) => event.id === selected);
  return (
    <section className="debugger">
      <p className="breadcrumbs">
        <Link to={`/workspaces/${workspace}`}>{workspace}</Link> /{' '}
        <Link to={`/workspaces/${workspace}/sources/${source}`}>{source}</Link> / live debugger
      </p>
      <h1>Live debugger: {source}</h1>
      <div className="toolbar" role="group" aria-label="Debugger controls">
        <p className={`connection ${status.state}`} role="status" aria-live="polite" data-testid="connection">
          {status.state === 'live'
            ? 'Live: every message of this source appears as it is stored.'
            : status.state === 'connecting'
              ? 'Connecting…'
              : `Reconnecting${status.detail ? ` (${status.detail})` : ''}…`}
        </p>
        <button type="button" onClick={() => setPaused(!paused)} aria-pressed={paused}>
          {paused ? `Resume${heldCount ? ` (${heldCount} new)` : ''}` : 'Pause'}
        </button>
        <label htmlFor="debugger-type">Type</label>
        <select id="debugger-type" value={typeFilter} onChange={(event) => setTypeFilter(event.target.value)}>
          <option value="">all types</option>
          {TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
        <label htmlFor="debugger-text">Search</label>
        <input
          id="debugger-text"
          type="search"
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder="event name, user, any text"
        />
        <span className="muted" data-testid="received-count">
          {received} received · {shown.length} shown
        </span>
      </div>
      <ErrorMessage error={deliveryError} />
      <div className="debugger-panes">
        <div className="event-list" aria-label="Events, newest first">
          {shown.length === 0 ? (
            <p className="muted">
              {events.length === 0
                ? 'Waiting for messages… send one with the snippet on the source page.'
                : 'No event matches the filters.'}
            </p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">Event / name</th>
                  <th scope="col">User</th>
                  <th scope="col">Time</th>
                  <th scope="col">Destinations</th>
                </tr>
              </thead>
              <tbody>
                {shown.slice(0, 500).map((event) => {
                  const messageId = String(event.message.messageId ?? '');
                  const outcomes = deliveries.get(messageId);
                  return (
                    <tr
                      key={event.id}
                      className={selected === event.id ? 'selected' : undefined}
                      data-testid="live-event"
                    >
                      <td>
                        <span className={`badge type-${String(event.message.type)}`}>
                          {String(event.message.type ?? '?')}
                        </span>
                      </td>
                      <td>
                        <button
                          type="button"
                          className="link-button"
                          aria-expanded={selected === event.id}
                          onClick={() => setSelected(selected === event.id ? undefined : event.id)}
                        >
                          {describe(event.message) || '(no name)'}
                        </button>
                      </td>
                      <td>{userOf(event.message)}</td>
                      <td>
                        <time dateTime={String(event.message.timestamp ?? '')}>
                          {new Date(
                            String(event.message.receivedAt ?? event.message.timestamp ?? ''),
                          ).toLocaleTimeString()}
                        </time>
                      </td>
                      <td className="outcomes">
                        {outcomes === undefined
                          ? 'checking…'
                          : outcomes.length === 0
                            ? 'none yet'
                            : outcomes.map((outcome) => (
                                <span
                                  key={outcome.destination_name}
                                  className={`badge outcome-${outcome.outcome}`}
                                  title={outcome.detail}
                                >
                                  {lastSegment(outcome.destination_name)}: {outcome.outcome.replace('_', ' ')}
                                </span>
                              ))}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </div>
        {selectedEvent && (
          <aside
            className="event-json"
            aria-label="Selected event"
            onKeyDown={(event) => {
              if (event.key === 'Escape') setSelected(undefined);
            }}
          >
            <h2>
              Message {String(selectedEvent.message.messageId ?? '')}{' '}
              <span className="muted">(position {selectedEvent.id})</span>
            </h2>
            <button type="button" onClick={() => setSelected(undefined)}>
              Close
            </button>
            <pre>
              <code>{JSON.stringify(selectedEvent.message, null, 2)}</code>
            </pre>
          </aside>
        )}
      </div>
    </section>
  );
}
