// Public entry point of the sluice package.
export { VERSION } from './version.js';
export { Errors, SluiceError, errorForCode, isSluiceError } from './util/errors.js';
export type { ErrorInfo, ErrorName } from './util/errors.js';
