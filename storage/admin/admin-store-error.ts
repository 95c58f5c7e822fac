/** Why an admin operation was refused. */
export class AdminStoreError extends Error {
  override readonly name = 'AdminStoreError';
  constructor(
    readonly code: 'exists' | 'not_found' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}
