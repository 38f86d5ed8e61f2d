import { z } from 'zod';

/** The ids a client names on the Host's wire: a session id and a message id (an idempotency key). */

/** The pattern of {@link HostSessionIdSchema}. */
export const HOST_SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** The pattern of {@link ClientMessageIdSchema}. */
export const CLIENT_MESSAGE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * A session id as the Host accepts it: 1–128 characters of letters, digits, `.`, `_`, `-`, starting with a letter or
 * digit. No `/`, no `..` segment, nothing a store could turn into a path outside its directory.
 */
export const HostSessionIdSchema = z
  .string()
  .regex(HOST_SESSION_ID_PATTERN, 'a session id is 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit');
/** A client-supplied message id (an idempotency key): the same alphabet as a session id. */
export const ClientMessageIdSchema = z
  .string()
  .regex(CLIENT_MESSAGE_ID_PATTERN, 'a message id is 1-128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit');
