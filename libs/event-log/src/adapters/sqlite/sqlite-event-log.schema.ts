/**
 * Tables of the embedded event log. Sequences come from AUTOINCREMENT so that a sequence is never
 * reused, even after retention has deleted every message (JetStream sequences never go back either).
 */
export const SQLITE_EVENT_LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  sequence      INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id  TEXT    NOT NULL,
  source_id     TEXT    NOT NULL,
  message_id    TEXT    NOT NULL,
  payload       TEXT    NOT NULL,
  published_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_source ON messages (source_id, sequence);
CREATE INDEX IF NOT EXISTS messages_by_published_at ON messages (published_at);

-- One row per messageId seen inside the dedupe window; the row is recorded in the same transaction
-- as the message, so an id is never marked seen without its message being stored (spec 12.1).
CREATE TABLE IF NOT EXISTS dedupe (
  message_id  TEXT    PRIMARY KEY,
  sequence    INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dedupe_by_expiry ON dedupe (expires_at);

-- next_sequence: the first message this consumer has not been given yet. Everything below it is
-- either acked/termed (no row in consumer_pending) or outstanding (a row in consumer_pending).
CREATE TABLE IF NOT EXISTS consumers (
  name           TEXT    PRIMARY KEY,
  source_id      TEXT,
  next_sequence  INTEGER NOT NULL,
  created_at     INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS consumer_pending (
  consumer_name     TEXT    NOT NULL,
  sequence          INTEGER NOT NULL,
  delivery_count    INTEGER NOT NULL,
  next_delivery_at  INTEGER NOT NULL,
  PRIMARY KEY (consumer_name, sequence)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS consumer_pending_by_due ON consumer_pending (consumer_name, next_delivery_at);

CREATE TABLE IF NOT EXISTS dead_letters (
  dead_letter_sequence  INTEGER PRIMARY KEY AUTOINCREMENT,
  consumer_name         TEXT    NOT NULL,
  sequence              INTEGER NOT NULL,
  workspace_id          TEXT    NOT NULL,
  source_id             TEXT    NOT NULL,
  message_id            TEXT    NOT NULL,
  published_at          INTEGER NOT NULL,
  payload               TEXT    NOT NULL,
  reason                TEXT    NOT NULL,
  attempts              TEXT    NOT NULL,
  dead_lettered_at      INTEGER NOT NULL,
  UNIQUE (consumer_name, sequence)
);
CREATE INDEX IF NOT EXISTS dead_letters_by_consumer ON dead_letters (consumer_name, dead_letter_sequence);

-- A lease is one row; revision grows by one on every write and is the compare-and-set token.
CREATE TABLE IF NOT EXISTS leases (
  name      TEXT    PRIMARY KEY,
  holder    TEXT    NOT NULL,
  data      TEXT    NOT NULL,
  revision  INTEGER NOT NULL
) WITHOUT ROWID;

-- markSeenOnce: one row per live key (a fixed-size hash chosen by the caller) until expires_at.
CREATE TABLE IF NOT EXISTS seen_once (
  key         TEXT    PRIMARY KEY,
  expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS seen_once_by_expiry ON seen_once (expires_at);
`;

export interface LeaseRow {
  name: string;
  holder: string;
  data: string;
  revision: number;
}

export interface MessageRow {
  sequence: number;
  workspace_id: string;
  source_id: string;
  message_id: string;
  payload: string;
  published_at: number;
}

export interface DeliverableRow extends MessageRow {
  delivery_count: number;
}

export interface ConsumerRow {
  name: string;
  source_id: string | null;
  next_sequence: number;
  created_at: number;
}

export interface DeadLetterRow {
  dead_letter_sequence: number;
  consumer_name: string;
  sequence: number;
  workspace_id: string;
  source_id: string;
  message_id: string;
  published_at: number;
  payload: string;
  reason: string;
  attempts: string;
  dead_lettered_at: number;
}
