# Knobs in a container: a static binary (no CGO: SQLite is the pure-Go
# modernc driver) on distroless, running as a non-root user, with its
# SQLite file on a volume. The build runs the Makefile's own commands
# (make generate, make build); dockerfile_test.go checks that they agree.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go tool templ generate -log-level warn
RUN CGO_ENABLED=0 go build -trimpath -o /out/knobs .
# The volumes' mount points, owned by the image's non-root user (65532),
# which distroless has no shell to create.
RUN mkdir -p /out/data /out/backups

# distroless/static: CA certificates and time zones, no shell, no curl;
# the HEALTHCHECK is knobs' own `knobs health`.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/knobs /usr/local/bin/knobs
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/backups /backups
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
ENV KNOBS_ADDR=0.0.0.0:8080 \
    KNOBS_DB=/data/knobs.db
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/knobs", "health"]
ENTRYPOINT ["/usr/local/bin/knobs"]
