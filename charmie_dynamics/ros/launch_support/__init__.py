"""What the launch files import: shared arguments, the lifecycle actions."""
