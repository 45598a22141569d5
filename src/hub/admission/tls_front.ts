// The admission port's TLS front: the hub's shared TCP front for TLS ports (src/hub/http/tls_front.ts), named here.

export { TlsFront, TlsFrontError, type TlsFrontOptions } from "../http/tls_front.ts";
