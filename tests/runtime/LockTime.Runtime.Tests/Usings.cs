// Usings.cs - test-wide settings: tests share Console and AppDomain data, so they run one at a time.
[assembly: Xunit.CollectionBehavior(DisableTestParallelization = true)]
