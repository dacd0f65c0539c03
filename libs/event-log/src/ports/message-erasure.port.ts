/**
 * The messages a privacy regulation erases (docs/regulations.md §4): those of one workspace (or of
 * some of its sources) whose `userId` (or `anonymousId`) is one of the subjects.
 */
export interface MessagesToErase {
  workspaceId: string;
  /** Only these sources' messages; absent: every source of the workspace. */
  sourceIds?: readonly string[];
  field: 'userId' | 'anonymousId';
  subjectIds: readonly string[];
}

/** What an erasure removed; a second erasure of the same subjects removes nothing more. */
export interface ErasedMessages {
  messages: number;
  /** The erased messages' ids, for what other stores keep by message id (recent delivery outcomes). */
  messageIds: string[];
  deadLetters: number;
  /** Protocols outcome records, whose samples are the messages as they came in. */
  protocolsOutcomes: number;
}

/** The erasure of regulated messages from everything the log keeps of them. */
export interface MessageErasure {
  /**
   * Erases the subjects' messages from the log (on JetStream erased, not only marked deleted), their
   * dead letters, the failed-attempt histories of the erased messages and their Protocols outcome
   * records. Idempotent: after a crash midway, running it again finishes the work. The dedupe index
   * keeps the erased messages' ids (hashed on JetStream), which hold nothing of the users.
   */
  eraseMessages(request: MessagesToErase): Promise<ErasedMessages>;
}

/** DI token of the erasure: the process's event log, which keeps what it erases. */
export const MESSAGE_ERASURE = Symbol('MessageErasure');
