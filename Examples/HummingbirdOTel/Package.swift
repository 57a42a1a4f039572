// swift-tools-version:6.2
import PackageDescription

// A Hummingbird service using Faultline, exporting its spans, metrics and logs as OTLP through swift-otel to an
// OpenTelemetry collector (README.md here). Its own build: not part of Faultline's `make test`.
let package = Package(
    name: "HummingbirdOTel",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Faultline", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "HummingbirdOTel",
            dependencies: [
                .product(name: "Faultline", package: "Faultline"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
