# Build a static binary, then ship it alone on a small base image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version reports state; pass it with --build-arg VERSION=$(git describe --tags --always).
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/batcheval/batcheval/report.version=${VERSION}" -o /out/batcheval ./cmd/batcheval

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates wget && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/batcheval /usr/local/bin/batcheval
USER nobody
EXPOSE 8080
ENTRYPOINT ["batcheval"]
CMD ["serve"]
