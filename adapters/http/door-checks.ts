/**
 * The Host and Origin checks every request passes before anything is read or written (docs/host.md, "Threat model").
 * A web page the user visits can make the browser send requests to a local host: under its own name after pointing
 * that name at 127.0.0.1 (DNS rebinding), or cross-site from its own origin. The first arrives with a foreign `Host`
 * and the page's own `Origin`; the second with the host's `Host` and a foreign `Origin`. Without a token the host
 * answers only loopback names (and `allowedHosts`); with or without one it answers only its own origin (the
 * console's, under a name no other site can take) and the listed CORS origins. A request with no `Origin` is not a
 * browser acting for another site.
 */

/** Why a request was turned away at the door (the body of its 403: `{"error": <refusal>}`). */
export type DoorRefusal = 'forbidden-host' | 'forbidden-origin';

/** What the door admits. */
export interface DoorPolicy {
  /** Tokens are configured: every `/api/` request needs one, so the `Host` is not checked (the `Origin` still is). */
  readonly tokenRequired: boolean;
  /** `Host` values accepted besides the loopback names: `name` (any port) or `name:port` (that port). */
  readonly allowedHosts: readonly string[];
  /** Origins accepted besides the host's own (the CORS origins), compared exactly. */
  readonly corsOrigins: readonly string[];
}

/** A `Host` value split into its name (lower case; an IPv6 address in brackets) and port (null when absent). */
interface Authority {
  readonly name: string;
  readonly port: number | null;
}

const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/;

/** Splits `name[:port]`, or null when it is not one (user info, a path, an empty name, a port past 65535). */
export const parseAuthority = (value: string): Authority | null => {
  const m = AUTHORITY.exec(value.trim().toLowerCase());
  if (!m) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && port > 65_535) return null;
  return { name: m[1]!.replace(/\.$/, ''), port };
};

/** Loopback names: `localhost`, `[::1]` and the 127.0.0.0/8 literals (an IP literal cannot be re-pointed by DNS). */
const isLoopbackName = (name: string): boolean => name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);

/** An IP literal: a name no DNS answer can re-point, so no other site's page can have it as its origin. */
const isIpLiteral = (name: string): boolean => /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) || /^\[[0-9a-f:.]+\]$/.test(name);

/** Is the authority a loopback name on the bound port, or an `allowedHosts` entry? */
const answeredName = (got: Authority, port: number, policy: DoorPolicy, boundPort: number | undefined): boolean => {
  if (isLoopbackName(got.name) && (boundPort === undefined || port === boundPort)) return true;
  return policy.allowedHosts.some((entry) => {
    const allowed = parseAuthority(entry);
    return allowed !== null && allowed.name === got.name && (allowed.port === null || allowed.port === port);
  });
};

/**
 * Is `host` (the request's authority, as the server routed it) one this host answers to? With a token, any; without
 * one, a loopback name on the port the connection arrived on (`boundPort`; any port when the server cannot say), or
 * an `allowedHosts` entry.
 */
export const hostAllowed = (host: string, policy: DoorPolicy, boundPort: number | undefined, defaultPort: number): boolean => {
  if (policy.tokenRequired) return true;
  const got = parseAuthority(host);
  return got !== null && answeredName(got, got.port ?? defaultPort, policy, boundPort);
};

/**
 * Is the `Origin` header acceptable for a request to `host`? Absent: yes (not a browser acting for a page). Else it
 * must be listed in `corsOrigins`, or be the host's own: the request's own authority (the console's page, served by
 * this host), under a name no other site can take — a loopback name on the bound port, an `allowedHosts` entry, or
 * an IP literal. So a page whose DNS name was re-pointed here is foreign even where the `Host` is not checked (with
 * a token). `null` and anything unreadable are refused.
 */
export const originAllowed = (origin: string | undefined, host: string, policy: DoorPolicy, boundPort: number | undefined): boolean => {
  if (origin === undefined) return true;
  if (policy.corsOrigins.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const own = parseAuthority(host);
  const from = parseAuthority(url.host);
  if (!own || !from) return false;
  const defaultPort = url.protocol === 'https:' ? 443 : 80;
  const port = from.port ?? defaultPort;
  if (from.name !== own.name || port !== (own.port ?? defaultPort)) return false;
  return isIpLiteral(from.name) || answeredName(from, port, policy, boundPort);
};

/** The door's verdict on one request: null when it may pass. The `Host` is checked first. */
export const doorRefusal = (
  request: { readonly host: string; readonly origin: string | undefined; readonly boundPort: number | undefined; readonly defaultPort: number },
  policy: DoorPolicy,
): DoorRefusal | null => {
  if (!hostAllowed(request.host, policy, request.boundPort, request.defaultPort)) return 'forbidden-host';
  if (!originAllowed(request.origin, request.host, policy, request.boundPort)) return 'forbidden-origin';
  return null;
};
