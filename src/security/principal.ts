// Who is on the other end of a connection: Kafka's KafkaPrincipal
// ("User:alice"), the name ACLs, quotas and logs use. Every client and peer
// connection carries one SecuritySession from accept to close: anonymous
// until a TLS client certificate or a SASL exchange says otherwise
// (docs/security.md). This module depends on nothing, so the network layer
// (src/net/) can hold a session without importing the security machinery.

export interface Principal {
  /** Kafka's principal type; "User" for every principal Sluice makes. */
  readonly type: string;
  readonly name: string;
}

export const ANONYMOUS: Principal = Object.freeze({ type: 'User', name: 'ANONYMOUS' });

export function principalString(p: Principal): string {
  return `${p.type}:${p.name}`;
}

/** Parses "User:alice" (the type is everything before the first colon). */
export function parsePrincipal(text: string): Principal {
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw new Error(`invalid principal "${text}": expected Type:name, e.g. User:alice`);
  return { type: text.slice(0, colon), name: text.slice(colon + 1) };
}

export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.type === b.type && a.name === b.name;
}

/** A connection's security state; the listener and the authentication layer update it in place. */
export interface SecuritySession {
  principal: Principal;
  /** How the principal was established: a SASL mechanism name, "SSL" (client certificate) or null (anonymous). */
  mechanism: string | null;
  /** Whether the connection came over TLS. */
  tls: boolean;
  /** When the credential behind the principal stops being valid (token expiry, KIP-368), on the node's clock; null: never. */
  expiresAtMs: number | null;
}

export function anonymousSession(tls = false): SecuritySession {
  return { principal: ANONYMOUS, mechanism: null, tls, expiresAtMs: null };
}
