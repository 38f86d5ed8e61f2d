/** What a signed chain head asserts: in `stream`, the event at `seq` has chain hash `hash`. */
export interface ChainHeadClaim {
  readonly stream: string;
  readonly seq: number;
  readonly hash: string;
}

/**
 * Signs chain heads (Ed25519 in steerlog's adapter; a KMS or HSM may implement it too). The signed message is the
 * RFC 8785 serialization of the `ChainHeadClaim`.
 */
export interface HeadSigner {
  /** Names the key (for example a fingerprint of the public key), stored beside each signature. */
  readonly keyId: string;
  /** The signature of `claim`, base64. */
  sign(claim: ChainHeadClaim): string;
}
