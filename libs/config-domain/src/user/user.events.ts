export interface UserRecord {
  email: string;
  /** scrypt hash in `scrypt$<salt>$<hash>` form; the password itself never enters an event. */
  passwordHash: string;
  instanceAdmin: boolean;
}

export type UserEvent = { type: 'UserRegistered'; data: UserRecord };
