# Knobs in a container: a static binary on a small base, running as a
# non-root user, with its SQLite file on a volume.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/knobs .

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin knobs \
 && mkdir -p /data && chown knobs /data
COPY --from=build /out/knobs /usr/local/bin/knobs
USER knobs
WORKDIR /data
VOLUME ["/data"]
ENV KNOBS_ADDR=0.0.0.0:8080 \
    KNOBS_DB=/data/knobs.db
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/usr/local/bin/knobs"]
