/** What responses and the audit trail show instead of a secret value. */
export const MASKED_SECRET = '********';

/** Ciphertexts of destination settings of type `password` start with this prefix. */
export const ENCRYPTED_VALUE_PREFIX = 'enc:v1:';
