// The package version, kept in one place for the CLI and protocol handshakes.
export const VERSION = '0.1.0';
