# gpubook server: a static, cgo-free binary on a distroless, non-root base.
# Not built on the development machines (they have no Docker engine): keep it
# correct by reading, and see the README.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gpubook ./cmd/gpubook

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gpubook /usr/local/bin/gpubook
USER nonroot:nonroot
EXPOSE 8080
ENV GPUBOOK_LISTEN=0.0.0.0:8080
HEALTHCHECK NONE
ENTRYPOINT ["/usr/local/bin/gpubook"]
CMD ["serve"]
