/** The scopes of an API key. Scopes nest: admin ⊃ correct ⊃ write ⊃ read. */
export type Scope = 'admin' | 'correct' | 'write' | 'read';
