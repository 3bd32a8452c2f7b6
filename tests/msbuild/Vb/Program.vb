' A SyncLock held 30 ms.
Imports System.Threading

Module Program
    Private ReadOnly Gate As New Object()

    Sub Main()
        SyncLock Gate
            Thread.Sleep(30)
        End SyncLock
        Console.WriteLine("done")
    End Sub
End Module
