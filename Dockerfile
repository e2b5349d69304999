# syntax=docker/dockerfile:1
#
# Sova in a container: one static binary (no cgo), run as a non-root user,
# its data under the /data volume. Two images:
#
#   docker build -t sova .                         # small; code tools withdrawn
#   docker build --target sandbox -t sova:sandbox .  # with the code sandbox
#
# The default image has no Python and no bubblewrap, so code_interpreter
# (and the modes' code tools) are withdrawn, with the reason at start-up
# and in `sova doctor`. The `sandbox` image adds bubblewrap, python3,
# numpy, pandas and matplotlib; bubblewrap needs user namespaces, which
# Docker's default seccomp profile refuses, so run that one with
# `--security-opt seccomp=unconfined` (or a profile allowing clone/unshare
# of user namespaces), else the tools are withdrawn all the same.
#
# Listening on 0.0.0.0 needs authentication: add a user first
#   docker run --rm -v sova-data:/data sova users add admin --role admin
# or set SOVA_AUTH=none on a network only trusted clients reach
# (docs/security.md).

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
COPY third_party ./third_party
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=""
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/sova ./cmd/sova

# sandbox: Debian with what the code sandbox runs (internal/sandbox).
FROM debian:trixie-slim AS sandbox
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates wget bubblewrap \
      python3 python3-numpy python3-pandas python3-matplotlib \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin sova \
 && mkdir -p /data && chown sova:sova /data
COPY --from=build /out/sova /usr/local/bin/sova
ENV SOVA_ADDR=0.0.0.0:8080 SOVA_DATA_DIR=/data
USER sova
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD wget -q -O /dev/null http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["sova"]
CMD ["serve"]

# runtime (the default, last stage): Alpine for CA certificates and
# busybox's wget for the health check; the binary needs nothing else.
FROM alpine:3.22 AS runtime
RUN apk add --no-cache ca-certificates \
 && adduser -D -H -u 10001 -h /data -s /sbin/nologin sova \
 && mkdir -p /data && chown sova:sova /data
COPY --from=build /out/sova /usr/local/bin/sova
ENV SOVA_ADDR=0.0.0.0:8080 SOVA_DATA_DIR=/data SOVA_SANDBOX_ENABLED=false
USER sova
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD wget -q -O /dev/null http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["sova"]
CMD ["serve"]
